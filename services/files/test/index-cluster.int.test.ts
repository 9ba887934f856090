/**
 * The file index's own suites — paths and listings, revisions, trash and retention, checkpoints
 * and rewind — again on a 3-master Redis Cluster. Every script must keep to the user's slot to
 * run there at all, and a user's keys spread over the cluster's nodes with the users. The suites
 * are the same modules as on the single Redis: this file points realFiles() at the cluster before
 * their hooks run (hooks run in the order they are declared), then imports them.
 */
import { startRedisCluster, type RedisClusterHandle } from '@workspace/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { realFiles, useRedis } from './support.js';

let cluster: RedisClusterHandle;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  useRedis({ url: cluster.url, cluster: true });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

it('cluster — the suites below run on the Redis Cluster', async () => {
  const files = await realFiles();
  expect(files.redis.isCluster).toBe(true);
  await files.close();
});

await import('./index.int.test.js');
await import('./revisions.int.test.js');
await import('./checkpoints.int.test.js');
