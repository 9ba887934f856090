import { newUserId, startRedisCluster, type RedisClusterHandle } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { triggerOwnerKey, userKeys } from '../src/adapters/keys.js';
import { removeAgent } from '../src/domain/cascade.js';
import { sign } from '../src/domain/signature.js';
import { harness, type Harness } from './support/harness.js';

// A 3-master Redis Cluster on loopback, started and removed by this file: every script and
// transaction must stay within one slot (a user's hash tag, or the due index's) to run at all.
let cluster: RedisClusterHandle;
let h: Harness;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  h = harness({ url: cluster.url, cluster: true });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await cluster?.stop();
});

describe('automations on redis cluster', () => {
  it('cluster — schedules of users on every node: create, list, summary, two racing schedulers run each once, cascade', async () => {
    const owners = Array.from({ length: 12 }, () => {
      const scope = { userId: newUserId() };
      return { scope, agentId: h.agents.add(scope.userId) };
    });
    const ids: string[] = [];
    for (const { scope, agentId } of owners) {
      // Yearly: the runs are forced due below, and a minute boundary inside the poll cannot add more.
      ids.push((await h.schedules.create(scope, agentId, { cron: '0 0 1 1 *' })).scheduleId);
      await h.schedules.create(scope, agentId, { cron: '0 0 * * *', enabled: false });
      expect(await h.schedules.list(scope, agentId)).toHaveLength(2);
      expect((await h.schedules.summarize(scope, [agentId]))[0]!.activeScheduleCount).toBe(1);
    }
    for (const id of ids) await h.redis.zadd(h.due.keys.index, 'XX', Date.now() - 1_000, id);
    const [a, b] = [h.scheduler({ tickMs: 5, batch: 3 }), h.scheduler({ tickMs: 5, batch: 3 })];
    onTestFinished(() => Promise.all([a.stop(), b.stop()]).then(() => undefined));
    a.start();
    b.start();
    const agentIds = owners.map((o) => o.agentId);
    await expect.poll(() => h.agents.chats.filter((c) => agentIds.includes(c.agentId)).length, { timeout: 10_000 }).toBe(12);
    await Promise.all([a.stop(), b.stop()]);
    expect(new Set(h.agents.chats.filter((c) => agentIds.includes(c.agentId)).map((c) => c.agentId)).size).toBe(12);

    const { scope, agentId } = owners[0]!;
    await removeAgent({ schedules: h.scheduleRepo, triggers: h.triggerRepo }, scope.userId, agentId);
    expect(await h.redis.exists(userKeys(scope.userId).schedules(agentId))).toBe(0);
    expect(await h.due.nextRuns([ids[0]!])).toEqual([null]);
    await expect(h.schedules.create(scope, agentId, { cron: '* * * * *' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('cluster — a trigger fires through its global owner key, and a delete removes both slots\' keys', async () => {
    const scope = { userId: newUserId() };
    const agentId = h.agents.add(scope.userId);
    const { trigger, secret } = await h.triggers.create(scope, agentId, 'cluster');
    const body = Buffer.from('{"on":"cluster"}');
    expect((await h.triggers.fire(trigger.triggerId, body, sign(secret, body))).chatId).toMatch(/^cht_/);
    await removeAgent({ schedules: h.scheduleRepo, triggers: h.triggerRepo }, scope.userId, agentId);
    expect(await h.redis.exists(triggerOwnerKey(trigger.triggerId))).toBe(0);
    expect(await h.redis.exists(userKeys(scope.userId).trigger(trigger.triggerId))).toBe(0);
    await expect(h.triggers.fire(trigger.triggerId, body, sign(secret, body))).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
  });
});
