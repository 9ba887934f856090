/**
 * The file index's own suites — paths and listings, revisions, trash and retention, checkpoints
 * and rewind, and the explicit folders a rewind and a fork rebuild — again on a 3-master Redis
 * Cluster. Every script must keep to the user's slot to run there at all, and a user's keys spread
 * over the cluster's nodes with the users. The suites are the same modules as on the single Redis:
 * this file points realFiles() at the cluster before their hooks run (hooks run in the order they
 * are declared), then imports them.
 */
import { luaScript } from '@workspace/platform';
import { startRedisCluster, type RedisClusterHandle } from '@workspace/testkit';
import type { Cluster } from 'ioredis';
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

it('cluster — a script that touches a key outside the slot it declares is refused (the shebang); the same Lua without it is let through', async () => {
  const files = await realFiles();
  const redis = files.redis as Cluster;
  const home = '{lua-check}a';
  const slotOf = async (key: string) => Number(await redis.cluster('KEYSLOT', key));
  const homeSlot = await slotOf(home);
  // Another key on the same node, in another slot: a script without the shebang may reach it.
  let other = '';
  for (let i = 0; !other && i < 1000; i++) {
    const candidate = `{lua-check-${i}}b`;
    const slot = await slotOf(candidate);
    if (slot !== homeSlot && redis.slots[slot]?.[0] === redis.slots[homeSlot]?.[0]) other = candidate;
  }
  expect(other).not.toBe('');
  const body = "redis.call('SET', KEYS[1], '1') redis.call('SET', ARGV[1], '1') return 1";
  try {
    await expect(redis.eval(luaScript(body), 1, home, other)).rejects.toThrow(/same slot/);
    expect(await redis.eval(body, 1, home, other)).toBe(1);
  } finally {
    await redis.del(home);
    await redis.del(other);
    await files.close();
  }
});

await import('./index.int.test.js');
await import('./revisions.int.test.js');
await import('./checkpoints.int.test.js');
await import('./bounds.int.test.js');
await import('./checkpoints-folders.int.test.js');
