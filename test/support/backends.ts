import { connect, type NatsConnection } from '@nats-io/transport-node';
import { inject } from 'vitest';
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
