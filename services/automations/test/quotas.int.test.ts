import { newUserId } from '@workspace/testkit';
import { AesGcmSecretBox } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { triggerOwnerKey, userKeys } from '../src/adapters/keys.js';
import { Schedules } from '../src/domain/schedules.js';
import { Triggers } from '../src/domain/triggers.js';
import { harness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl, cluster: inject('infra').redisCluster ?? false });
});
afterAll(async () => {
  await h?.close();
});

const MAX = 5;

function owner() {
  const scope = { userId: newUserId() };
  return { scope, agentId: h.agents.add(scope.userId) };
}

describe('per-Agent quotas', () => {
  it('quotas — 20 concurrent schedule creates on one Agent: exactly MAX_SCHEDULES_PER_AGENT stored, the rest 403 with the figures, nothing left of them', async () => {
    const schedules = new Schedules({ repo: h.scheduleRepo, agents: h.agents, maxPerAgent: MAX });
    const { scope, agentId } = owner();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => schedules.create(scope, agentId, { cron: '*/5 * * * *' })));
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(created).toHaveLength(MAX);
    expect(refused).toHaveLength(20 - MAX);
    for (const err of refused) expect(err).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_SCHEDULES_PER_AGENT', limit: String(MAX), used: String(MAX) } });
    expect((await schedules.list(scope, agentId)).map((s) => s.scheduleId).sort()).toEqual(created.map((s) => s.scheduleId).sort());
    // A refused create left no due entry behind: only the stored schedules will ever run.
    expect(await h.redis.zcard(h.due.keys.index)).toBe(MAX);
    // Per Agent: another Agent of the same user has its own allowance; a delete frees a place.
    const other = h.agents.add(scope.userId);
    await expect(schedules.create(scope, other, { cron: '0 * * * *' })).resolves.toMatchObject({ agentId: other });
    await schedules.delete(scope, agentId, created[0]!.scheduleId);
    await expect(schedules.create(scope, agentId, { cron: '0 * * * *' })).resolves.toMatchObject({ agentId });
  });

  it('quotas — 20 concurrent trigger creates on one Agent: exactly MAX_TRIGGERS_PER_AGENT stored, the rest 403', async () => {
    const triggers = new Triggers({ repo: h.triggerRepo, agents: h.agents, box: new AesGcmSecretBox(undefined), maxPerAgent: MAX });
    const { scope, agentId } = owner();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => triggers.create(scope, agentId, `t${i}`)));
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.trigger] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(created).toHaveLength(MAX);
    for (const err of refused) expect(err).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_TRIGGERS_PER_AGENT', limit: String(MAX) } });
    expect(await h.redis.zcard(userKeys(scope.userId).triggers(agentId))).toBe(MAX);
    expect((await triggers.list(scope, agentId)).map((t) => t.triggerId).sort()).toEqual(created.map((t) => t.triggerId).sort());
    for (const t of created) expect(await h.redis.get(triggerOwnerKey(t.triggerId))).toBe(scope.userId);
  });

  it('quotas — without a limit (the domain default) creates are not counted against one', async () => {
    const { scope, agentId } = owner();
    await Promise.all(Array.from({ length: 8 }, () => h.schedules.create(scope, agentId, { cron: '0 0 * * *', enabled: false })));
    expect(await h.schedules.list(scope, agentId)).toHaveLength(8);
  });
});
