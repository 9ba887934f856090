import { setTimeout as sleep } from 'node:timers/promises';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { userKeys } from '../src/adapters/keys.js';
import { harness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
});
afterAll(async () => {
  await h?.close();
});

function owner() {
  const scope = { userId: newUserId() };
  return { scope, agentId: h.agents.add(scope.userId) };
}

describe('schedules', () => {
  it('schedules — create answers the contract shape; UTC and enabled by default; nextRunAt is the next whole minute', async () => {
    const { scope, agentId } = owner();
    const before = Date.now();
    const s = await h.schedules.create(scope, agentId, { cron: '* * * * *' });
    expect(s).toEqual({ scheduleId: expect.stringMatching(/^sch_[0-9a-f]{32}$/), agentId, cron: '* * * * *', timezone: 'UTC', enabled: true, nextRunAt: expect.any(String), alias: null, createdAt: expect.any(String) });
    const next = Date.parse(s.nextRunAt!);
    expect(next % 60_000).toBe(0);
    expect(next).toBeGreaterThan(before);
    expect(next - before).toBeLessThanOrEqual(60_000);
    expect(new Date(s.createdAt).toISOString()).toBe(s.createdAt);
  });

  it('schedules — list is newest first with each next run; a disabled schedule has nextRunAt null', async () => {
    const { scope, agentId } = owner();
    const first = await h.schedules.create(scope, agentId, { cron: '0 9 * * MON-FRI', timezone: 'America/New_York' });
    await sleep(2); // another millisecond: creation time orders the list
    const second = await h.schedules.create(scope, agentId, { cron: '*/15 * * * *', enabled: false });
    const list = await h.schedules.list(scope, agentId);
    expect(list.map((s) => s.scheduleId)).toEqual([second.scheduleId, first.scheduleId]);
    expect(list).toEqual([second, first]);
    expect(list[0]!.nextRunAt).toBeNull();
  });

  it('schedules — an invalid cron or zone is INVALID_ARGUMENT naming the field, and nothing is stored', async () => {
    const { scope, agentId } = owner();
    await expect(h.schedules.create(scope, agentId, { cron: '* * * *' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'cron' } });
    await expect(h.schedules.create(scope, agentId, { cron: '* * * * *', timezone: 'Nowhere/Atlantis' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'timezone' } });
    expect(await h.schedules.list(scope, agentId)).toEqual([]);
  });

  it('schedules — an Agent that is not the user\'s is AGENT_NOT_FOUND on every route', async () => {
    const { agentId } = owner();
    const stranger = { userId: newUserId() };
    await expect(h.schedules.create(stranger, agentId, { cron: '* * * * *' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.schedules.list(stranger, agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.schedules.delete(stranger, agentId, 'sch_00000000000000000000000000000000')).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('schedules — delete removes record and due entry; unknown, malformed or another Agent\'s id is SCHEDULE_NOT_FOUND', async () => {
    const { scope, agentId } = owner();
    const other = h.agents.add(scope.userId);
    const s = await h.schedules.create(scope, agentId, { cron: '* * * * *' });
    await expect(h.schedules.delete(scope, other, s.scheduleId)).rejects.toMatchObject({ code: 'SCHEDULE_NOT_FOUND' });
    await expect(h.schedules.delete(scope, agentId, 'nope')).rejects.toMatchObject({ code: 'SCHEDULE_NOT_FOUND' });
    await h.schedules.delete(scope, agentId, s.scheduleId);
    await expect(h.schedules.delete(scope, agentId, s.scheduleId)).rejects.toMatchObject({ code: 'SCHEDULE_NOT_FOUND' });
    expect(await h.redis.exists(userKeys(scope.userId).schedule(s.scheduleId))).toBe(0);
    expect(await h.due.nextRuns([s.scheduleId])).toEqual([null]);
    expect(await h.redis.hexists(h.due.keys.runs, s.scheduleId)).toBe(0);
  });

  it('schedules — the summary counts enabled schedules and gives the earliest next run, per Agent in the order asked', async () => {
    const { scope, agentId } = owner();
    const quiet = h.agents.add(scope.userId);
    const hourly = await h.schedules.create(scope, agentId, { cron: '0 * * * *' });
    const minutely = await h.schedules.create(scope, agentId, { cron: '* * * * *' });
    await h.schedules.create(scope, agentId, { cron: '* * * * *', enabled: false });
    await h.schedules.create(scope, quiet, { cron: '* * * * *', enabled: false });
    const summaries = await h.schedules.summarize(scope, [quiet, agentId, 'agt_unknown']);
    expect(summaries).toEqual([
      { agentId: quiet, activeScheduleCount: 0, nextRunAt: null },
      { agentId, activeScheduleCount: 2, nextRunAt: [hourly.nextRunAt!, minutely.nextRunAt!].sort()[0] },
      { agentId: 'agt_unknown', activeScheduleCount: 0, nextRunAt: null },
    ]);
    expect(await h.schedules.summarize(scope, [])).toEqual([]);
  });

  it('schedules — a create that lost the race with the Agent\'s deletion is refused and leaves nothing', async () => {
    const { scope, agentId } = owner();
    await h.scheduleRepo.deleteAgent(scope.userId, agentId); // the cascade ran; the Agent check below still passes
    await expect(h.schedules.create(scope, agentId, { cron: '* * * * *' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    expect(await h.redis.zcard(userKeys(scope.userId).schedules(agentId))).toBe(0);
    const stray = await h.redis.hgetall(h.due.keys.runs);
    expect(Object.values(stray).some((v) => v.includes(agentId))).toBe(false);
  });
});
