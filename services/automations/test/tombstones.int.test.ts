import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { userKeys } from '../src/adapters/keys.js';
import { AGENT_TOMBSTONE_TTL_MS, tombstoneAgent } from '../src/adapters/tombstones.redis.js';
import { removeAgent } from '../src/domain/cascade.js';
import { harness, type Harness } from './support/harness.js';

/**
 * A deleted Agent's tombstone refuses a create that raced the cascade, for a day, and then
 * goes: the user's set never holds more than one window of deletions, and disappears after it.
 * The Agents here stay known to the directory, as they are to a create that checked them
 * before the deletion.
 */
let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
});
afterAll(async () => {
  await h?.close();
});

function agentOf() {
  const scope = { userId: newUserId() };
  return { scope, agentId: h.agents.add(scope.userId), tombstones: userKeys(scope.userId).deletedAgents };
}

async function refused(scope: { userId: string }, agentId: string): Promise<boolean> {
  try {
    await h.schedules.create(scope, agentId, { cron: '0 0 * * *', enabled: false });
    return false;
  } catch (err) {
    expect(err).toMatchObject({ code: 'AGENT_NOT_FOUND' });
    return true;
  }
}

describe('tombstones', () => {
  it('tombstones — the cascade tombstones the Agent for a day: creates are refused, and the entry and its set are set to expire', async () => {
    const a = agentOf();
    await removeAgent({ schedules: h.scheduleRepo, triggers: h.triggerRepo }, a.scope.userId, a.agentId);
    expect(await refused(a.scope, a.agentId)).toBe(true);
    await expect(h.triggers.create(a.scope, a.agentId, 'late')).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    expect(await h.redis.type(a.tombstones)).toBe('zset');
    const expires = Number(await h.redis.zscore(a.tombstones, a.agentId));
    expect(Math.abs(expires - (Date.now() + AGENT_TOMBSTONE_TTL_MS))).toBeLessThan(60_000);
    const ttl = await h.redis.pttl(a.tombstones);
    expect(ttl).toBeGreaterThan(AGENT_TOMBSTONE_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(AGENT_TOMBSTONE_TTL_MS);
    // The old set of every Agent ever deleted is no longer written.
    expect(await h.redis.exists(a.tombstones.replace(/agent-tombstones$/, 'deleted-agents'))).toBe(0);
  });

  it('tombstones — they expire: once the window has passed, a create goes through and the set is gone', async () => {
    const a = agentOf();
    await tombstoneAgent(h.redis, a.tombstones, a.agentId, 300);
    expect(await refused(a.scope, a.agentId)).toBe(true);
    await expect.poll(() => h.redis.exists(a.tombstones), { timeout: 5_000, interval: 50 }).toBe(0);
    expect(await refused(a.scope, a.agentId)).toBe(false);
  });

  it('tombstones — an expired entry refuses nothing, and the next tombstone trims it: the set holds one window of deletions', async () => {
    const a = agentOf();
    const b = h.agents.add(a.scope.userId);
    const c = h.agents.add(a.scope.userId);
    await tombstoneAgent(h.redis, a.tombstones, a.agentId, 200);
    await tombstoneAgent(h.redis, a.tombstones, b, 60_000);
    // The set lives as long as its newest entry.
    expect(await h.redis.pttl(a.tombstones)).toBeGreaterThan(50_000);
    await expect.poll(() => refused(a.scope, a.agentId), { timeout: 5_000, interval: 50 }).toBe(false);
    expect(await h.redis.zcard(a.tombstones)).toBe(2);
    expect(await refused(a.scope, b)).toBe(true);
    await tombstoneAgent(h.redis, a.tombstones, c, 60_000);
    expect((await h.redis.zrange(a.tombstones, '0', '-1')).sort()).toEqual([b, c].sort());
    expect(await h.redis.zcard(a.tombstones)).toBe(2);
  });
});
