import { connect, type NatsConnection } from '@nats-io/transport-node';
import { inject } from 'vitest';
import { Client as S3Client } from 'minio';
import { createRedis, type RedisClient } from '@workspace/platform';

/** A Redis client on the tests' Redis, a single node or a cluster (scaled topology). */
export function testRedis(name = 'e2e'): RedisClient {
  const infra = inject('infra');
  return createRedis({ url: infra.redisUrl, cluster: infra.redisCluster ?? false, name });
}

/** A NATS connection to the tests' NATS, a single server or a cluster (scaled topology). */
export function testNats(): Promise<NatsConnection> {
  return connect({ servers: inject('infra').natsUrl.split(',') });
}

/** A minio client on the tests' S3-compatible store (to look into a stack's bucket). */
export function s3Client(): S3Client {
  const { endpoint, accessKey, secretKey, region } = inject('infra').s3;
  const url = new URL(endpoint);
  return new S3Client({ endPoint: url.hostname, port: Number(url.port), useSSL: url.protocol === 'https:', accessKey, secretKey, region, pathStyle: true });
}
