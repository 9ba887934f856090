import { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * One client for a Redis URL, or for a cluster when `cluster` is set (`url` is then a
 * comma-separated list of seed URLs). Commands fail fast while disconnected instead of
 * queueing forever, so callers answer 503 rather than hang.
 */
export function createRedis(options: { url: string; cluster?: boolean; name?: string }): RedisClient {
  const common = { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectionName: options.name } as const;
  if (!options.cluster) return new Redis(options.url, { ...common, lazyConnect: false });
  const seeds = options.url.split(',').map((u) => {
    const parsed = new URL(u.trim());
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
  return new Cluster(seeds, { redisOptions: common, enableOfflineQueue: true });
}

/** A second connection to the same Redis, for WATCH/MULTI (WATCH belongs to a connection). */
export function duplicateRedis(client: RedisClient): RedisClient {
  return client instanceof Cluster ? client.duplicate() : client.duplicate();
}
