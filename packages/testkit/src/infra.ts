import { connect } from 'node:net';
import { s3FromEnv, startMinioContainer, startS3rver, type S3Endpoint } from './s3.js';

/** Where the tests' backends are. */
export interface InfraUrls {
  redisUrl: string;
  natsUrl: string;
  /** The S3-compatible store (S3_* settings of the files service). */
  s3: S3Endpoint;
  /** How each was found: "env", "container" or "local" ("embedded" for the in-process s3rver). */
  sources: { redis: string; nats: string; s3: string };
  /** "scaled": a Redis Cluster, a NATS cluster, and two replicas of every process. */
  topology?: 'single' | 'scaled';
  /** `redisUrl` lists the seeds of a Redis Cluster. */
  redisCluster?: boolean;
  /** Replicas of the event stream (3 on the NATS cluster). */
  natsReplicas?: number;
}

export interface Infra extends InfraUrls {
  stop(): Promise<void>;
}

const LOCAL_REDIS = 'redis://127.0.0.1:6379';
const LOCAL_NATS = 'nats://127.0.0.1:4222';

/** True when something accepts TCP connections at the URL's host and port. */
export function reachable(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function containerRuntime(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds Redis, NATS and S3 as ARCHITECTURE.md says: REDIS_URL / NATS_URL / S3_ENDPOINT first;
 * else containers through testcontainers when a container runtime answers; else the local
 * defaults, which must answer (a clear error otherwise), and an embedded s3rver.
 */
export async function resolveInfra(env: Record<string, string | undefined> = process.env): Promise<Infra> {
  const stops: (() => Promise<unknown>)[] = [];
  let redisUrl = env.REDIS_URL;
  let natsUrl = env.NATS_URL;
  let s3 = s3FromEnv(env);
  const sources = { redis: redisUrl ? 'env' : 'local', nats: natsUrl ? 'env' : 'local', s3: s3 ? 'env' : 'embedded' };

  if ((!redisUrl || !natsUrl) && (await containerRuntime())) {
    const { GenericContainer, Wait } = await import('testcontainers');
    if (!redisUrl) {
      const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
      stops.push(() => redis.stop());
      redisUrl = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
      sources.redis = 'container';
    }
    if (!natsUrl) {
      const nats = await new GenericContainer('nats:2.10-alpine')
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start();
      stops.push(() => nats.stop());
      natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
      sources.nats = 'container';
    }
  }
  // S3: S3_ENDPOINT, else MinIO in a container, else s3rver in this process on a random port.
  if (!s3) {
    const inContainer = await containerRuntime();
    const started = inContainer ? await startMinioContainer() : await startS3rver();
    if (inContainer) sources.s3 = 'container';
    stops.push(() => started.stop());
    s3 = started.s3;
  }
  redisUrl ??= LOCAL_REDIS;
  natsUrl ??= LOCAL_NATS;
  for (const [what, url] of [['Redis', redisUrl], ['NATS', natsUrl]] as const) {
    if (!(await reachable(url))) {
      throw new Error(`${what} does not answer at ${url}: set ${what === 'Redis' ? 'REDIS_URL' : 'NATS_URL'}, start a container runtime, or start it locally (see README "Tests")`);
    }
  }
  return {
    redisUrl,
    natsUrl,
    s3,
    sources,
    stop: async () => {
      await Promise.all(stops.map((s) => s()));
    },
  };
}
