import { resolveInfra, type Infra } from './infra.js';
import { startNatsCluster } from './nats-cluster.js';
import { startRedisCluster } from './redis-cluster.js';

/**
 * The scale-out topology of the end-to-end suite: a 3-master Redis Cluster and a 3-node NATS
 * cluster (streams with 3 replicas), started on loopback from the binaries on the machine; S3
 * is found as usual. Services then run as two replicas each (test/support/stack.ts).
 */
export async function resolveScaledInfra(env: Record<string, string | undefined> = process.env): Promise<Infra> {
  const base = await resolveInfra(env);
  const redis = await startRedisCluster(3).catch(async (err: unknown) => {
    await base.stop();
    throw err;
  });
  const nats = await startNatsCluster(3).catch(async (err: unknown) => {
    await Promise.all([redis.stop(), base.stop()]);
    throw err;
  });
  return {
    ...base,
    redisUrl: redis.url,
    natsUrl: nats.url,
    redisCluster: true,
    natsReplicas: 3,
    topology: 'scaled',
    sources: { ...base.sources, redis: 'cluster', nats: 'cluster' },
    stop: async () => {
      await Promise.all([redis.stop(), nats.stop(), base.stop()]);
    },
  };
}
