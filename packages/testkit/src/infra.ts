import { connect } from 'node:net';
import { startRgw } from './rgw.js';
import { s3FromEnv, startMinioContainer, startS3rver, type S3Endpoint, type S3Handle } from './s3.js';

/** Where the tests' backends are. */
export interface InfraUrls {
  redisUrl: string;
  natsUrl: string;
  /** The S3-compatible store (S3_* settings of the files service). */
  s3: S3Endpoint;
  /** How each was found: "env", "container" or "local" ("embedded" for s3rver, "rgw" for Ceph radosgw). */
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

/** What S3_BACKEND may name: the S3 server to start when S3_ENDPOINT is unset. */
const S3_BACKENDS = ['rgw', 's3rver'] as const;

/**
 * The S3 server to start: S3_BACKEND=rgw a one-node Ceph cluster with radosgw (a strict S3),
 * S3_BACKEND=s3rver the embedded s3rver; unset, MinIO in a container when a runtime answers,
 * else s3rver.
 */
async function startS3(env: Record<string, string | undefined>): Promise<{ handle: S3Handle; source: string }> {
  const backend = env.S3_BACKEND || undefined;
  if (backend !== undefined && !(S3_BACKENDS as readonly string[]).includes(backend)) {
    throw new Error(`S3_BACKEND must be one of ${S3_BACKENDS.join(', ')} (or unset), got ${JSON.stringify(backend)}`);
  }
  if (backend === 'rgw') {
    const rgw = await startRgw();
    console.log(`S3: Ceph radosgw on ${rgw.s3.endpoint}, ready in ${rgw.startupMs} ms`);
    return { handle: rgw, source: 'rgw' };
  }
  if (backend === undefined && (await containerRuntime())) return { handle: await startMinioContainer(), source: 'container' };
  return { handle: await startS3rver(), source: 'embedded' };
}

/**
 * Finds Redis, NATS and S3 as ARCHITECTURE.md says: REDIS_URL / NATS_URL / S3_ENDPOINT first;
 * else containers through testcontainers when a container runtime answers; else the local
 * defaults, which must answer (a clear error otherwise), and an embedded s3rver. S3_BACKEND
 * picks the S3 server to start instead (see startS3).
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
  // S3: S3_ENDPOINT, else the server S3_BACKEND names, else MinIO in a container, else s3rver.
  if (!s3) {
    const started = await startS3(env).catch(async (err: unknown) => {
      await Promise.all(stops.map((s) => s()));
      throw err;
    });
    sources.s3 = started.source;
    stops.push(() => started.handle.stop());
    s3 = started.handle.s3;
  }
  redisUrl ??= LOCAL_REDIS;
  natsUrl ??= LOCAL_NATS;
  for (const [what, url] of [['Redis', redisUrl], ['NATS', natsUrl]] as const) {
    if (!(await reachable(url))) {
      // Nothing started for this run is left behind (an rgw cluster is four processes).
      await Promise.all(stops.map((s) => s()));
      throw new Error(`${what} does not answer at ${url}: set ${what === 'Redis' ? 'REDIS_URL' : 'NATS_URL'}, start a container runtime, or start it locally (see docs/testing.md, "Backends")`);
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
