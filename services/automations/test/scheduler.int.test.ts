import { setTimeout as sleep } from 'node:timers/promises';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { SCHEDULED_TITLE } from '../src/domain/scheduler.js';
import { harness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
});
afterAll(async () => {
  await h?.close();
});

/** Moves the schedules' due time to `at` (what waiting for the minute would do, without the wait). */
async function dueAt(scheduleIds: string[], at: number): Promise<void> {
  for (const id of scheduleIds) expect(await h.redis.zadd(h.due.keys.index, 'XX', 'CH', at, id)).toBe(1);
}

/**
 * `count` Agents of fresh users, each with one schedule of `cron`. The racing tests force runs due
 * with `dueAt` and use a yearly cron by default: with `* * * * *`, a round that crossed a minute
 * boundary on a loaded machine saw the next minute's runs start too (120 chats where 60 were due).
 */
async function schedulesOf(count: number, cron = '0 0 1 1 *'): Promise<{ agentIds: string[]; scheduleIds: string[] }> {
  const agentIds: string[] = [];
  const scheduleIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const scope = { userId: newUserId() };
    const agentId = h.agents.add(scope.userId);
    agentIds.push(agentId);
    scheduleIds.push((await h.schedules.create(scope, agentId, { cron })).scheduleId);
  }
  return { agentIds, scheduleIds };
}

const chatsOf = (agentIds: string[]) => h.agents.chats.filter((c) => agentIds.includes(c.agentId));

describe('scheduler', () => {
  it('scheduler — two replicas racing over the same due runs start each run exactly once', async () => {
    const { agentIds, scheduleIds } = await schedulesOf(60);
    const started = { a: 0, b: 0 };
    // Small batches, so both replicas keep claiming from the same index at the same time.
    const a = h.scheduler({ tickMs: 5, batch: 7, observe: (o) => void (o === 'started' && started.a++) });
    const b = h.scheduler({ tickMs: 5, batch: 7, observe: (o) => void (o === 'started' && started.b++) });
    // A failed round must not leave replicas claiming the next test's runs.
    onTestFinished(() => Promise.all([a.stop(), b.stop()]).then(() => undefined));
    for (const round of [1, 2]) {
      await dueAt(scheduleIds, Date.now() - 1_000);
      a.start();
      b.start();
      await expect.poll(() => chatsOf(agentIds).length, { timeout: 10_000 }).toBe(60 * round);
      await sleep(300);
      await Promise.all([a.stop(), b.stop()]);
      const perAgent = new Map<string, number>();
      for (const c of chatsOf(agentIds)) perAgent.set(c.agentId, (perAgent.get(c.agentId) ?? 0) + 1);
      expect([...perAgent.values()].every((n) => n === round)).toBe(true);
      expect(perAgent.size).toBe(60);
    }
    expect(started.a).toBeGreaterThan(0);
    expect(started.b).toBeGreaterThan(0);
    // Every run moved on to its cron's next time (the next 1 January, 00:00 UTC).
    const now = new Date();
    const nextJanuary = Date.UTC(now.getUTCFullYear() + 1, 0, 1);
    expect(await h.due.nextRuns(scheduleIds)).toEqual(scheduleIds.map(() => nextJanuary));
  });

  it('scheduler — 1,000 runs due at once: two replicas start every one exactly once, and say how fast', async () => {
    const { agentIds, scheduleIds } = await schedulesOf(1_000);
    const pipeline = h.redis.pipeline();
    for (const id of scheduleIds) pipeline.zadd(h.due.keys.index, 'XX', Date.now() - 1_000, id);
    await pipeline.exec();
    const [a, b] = [h.scheduler({ tickMs: 1_000 }), h.scheduler({ tickMs: 1_000 })];
    onTestFinished(() => Promise.all([a.stop(), b.stop()]).then(() => undefined));
    const started = Date.now();
    a.start();
    b.start();
    await expect.poll(() => chatsOf(agentIds).length, { timeout: 20_000, interval: 10 }).toBe(1_000);
    const ms = Date.now() - started;
    await Promise.all([a.stop(), b.stop()]);
    expect(new Set(chatsOf(agentIds).map((c) => c.agentId)).size).toBe(1_000);
    console.info(`scheduler: 1000 due runs claimed, settled and started by 2 replicas in ${ms} ms (chat start recorded in process)`);
  }, 60_000);

  it('scheduler — a claim whose lease ran out is taken over once; the stale replica cannot settle it', async () => {
    const { scheduleIds } = await schedulesOf(1);
    const id = scheduleIds[0]!;
    await dueAt([id], Date.now() - 1_000);
    const stale = (await h.due.claim(1, 1_000)).find((r) => r.scheduleId === id);
    expect(stale).toBeDefined();
    await sleep(10);
    const fresh = (await h.due.claim(5_000, 1_000)).find((r) => r.scheduleId === id);
    expect(fresh).toBeDefined();
    expect(fresh!.leaseUntil).toBeGreaterThan(stale!.leaseUntil);
    // While claimed, nobody else gets it.
    expect((await h.due.claim(5_000, 1_000)).some((r) => r.scheduleId === id)).toBe(false);
    const next = Date.now() + 60_000;
    expect(await h.due.ack(stale!, next)).toBe(false);
    expect(await h.due.ack(fresh!, next)).toBe(true);
    expect(await h.due.ack(fresh!, next + 60_000)).toBe(false);
    expect(await h.due.nextRuns([id])).toEqual([next]);
  });

  it('scheduler — a due schedule starts a chat within 10 s, titled "Scheduled run", as its owner', async () => {
    const scope = { userId: newUserId() };
    const agentId = h.agents.add(scope.userId);
    const schedule = await h.schedules.create(scope, agentId, { cron: '* * * * *', timezone: 'Europe/Berlin' });
    const due = Date.now() + 1_500;
    await dueAt([schedule.scheduleId], due);
    const replica = h.scheduler({ tickMs: 1_000 });
    replica.start();
    await expect.poll(() => chatsOf([agentId]).length, { timeout: 12_000, interval: 50 }).toBe(1);
    await replica.stop();
    const [chat] = chatsOf([agentId]);
    expect(chat).toMatchObject({ userId: scope.userId, agentId, title: SCHEDULED_TITLE });
    const lateMs = chat!.at - due;
    console.info(`scheduler: chat started ${lateMs} ms after its due time (SCHEDULER_TICK_MS=1000)`);
    expect(lateMs).toBeGreaterThanOrEqual(0);
    expect(lateMs).toBeLessThan(10_000);
  });

  it('scheduler — a deleted schedule never runs; a disabled one never enters the due index', async () => {
    const scope = { userId: newUserId() };
    const agentId = h.agents.add(scope.userId);
    const deleted = await h.schedules.create(scope, agentId, { cron: '* * * * *' });
    const disabled = await h.schedules.create(scope, agentId, { cron: '* * * * *', enabled: false });
    expect(disabled.nextRunAt).toBeNull();
    expect(await h.due.nextRuns([disabled.scheduleId])).toEqual([null]);
    await dueAt([deleted.scheduleId], Date.now() - 1_000);
    await h.schedules.delete(scope, agentId, deleted.scheduleId);
    await h.scheduler().tick();
    expect(chatsOf([agentId])).toEqual([]);
    expect(await h.due.nextRuns([deleted.scheduleId])).toEqual([null]);
  });

  it('scheduler — a due entry left by an interrupted create (no record) is dropped, and starts nothing', async () => {
    const userId = newUserId();
    const agentId = h.agents.add(userId);
    const orphan = 'sch_00000000000000000000000000000001';
    const createdAt = new Date(Date.now() - 60_000).toISOString();
    await h.due.add(orphan, { userId, agentId, cron: '* * * * *', timezone: 'UTC', createdAt }, Date.now() - 1_000);
    await h.scheduler().tick();
    expect(await h.due.nextRuns([orphan])).toEqual([null]);
    expect(await h.redis.hexists(h.due.keys.runs, orphan)).toBe(0);
    expect(chatsOf([agentId])).toEqual([]);
  });

  it('scheduler — a run of an Agent that is gone starts nothing and the schedule carries on', async () => {
    const scope = { userId: newUserId() };
    const agentId = h.agents.add(scope.userId);
    const schedule = await h.schedules.create(scope, agentId, { cron: '*/5 * * * *' });
    h.agents.remove(scope.userId, agentId);
    await dueAt([schedule.scheduleId], Date.now() - 1_000);
    await h.scheduler().tick();
    expect(chatsOf([agentId])).toEqual([]);
    const [next] = await h.due.nextRuns([schedule.scheduleId]);
    expect(next! > Date.now() && next! % 300_000 === 0).toBe(true);
  });
});
