import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AgentDirectory, DueRun, Scope } from '../src/domain/ports.js';
import { runIdempotencyKey, SCHEDULED_TITLE, type RunOutcome } from '../src/domain/scheduler.js';
import { harness, type Harness } from './support/harness.js';

/**
 * A run is claimed at least once and its chat created under a key of (schedule, due time): a
 * replica that dies anywhere between the claim and the ack costs a lease's wait, never a run and
 * never a second chat. The crashes are the states a dead replica leaves in Redis (a claim, a chat
 * started under the run's key) or schedulers stopped in the middle of CreateChat.
 */
let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
});
afterAll(async () => {
  await h?.close();
});

type ChatRequest = Parameters<AgentDirectory['startChat']>[1];

/** A fresh user's Agent with one `* * * * *` schedule, due `dueAt` (what the minute turning would do). */
async function dueSchedule(dueAt = Date.now() - 1_000) {
  const scope = { userId: newUserId() };
  const agentId = h.agents.add(scope.userId);
  const { scheduleId } = await h.schedules.create(scope, agentId, { cron: '* * * * *' });
  expect(await h.redis.zadd(h.due.keys.index, 'XX', 'CH', dueAt, scheduleId)).toBe(1);
  return { scope, agentId, scheduleId, dueAt, key: runIdempotencyKey({ scheduleId, dueAt }) };
}

const chatsOf = (agentId: string) => h.agents.chats.filter((c) => c.agentId === agentId);
const callsWith = (key: string) => h.agents.calls.filter((k) => k === key).length;
const mine = (runs: DueRun[], scheduleId: string) => runs.find((r) => r.scheduleId === scheduleId);

/** Acknowledged: out of flight and moved to a whole minute after it was due. */
async function acknowledged(scheduleId: string, dueAt: number): Promise<boolean> {
  const next = (await h.due.nextRuns([scheduleId]))[0] ?? null;
  const inFlight = await h.redis.hexists(h.due.keys.inflight, scheduleId);
  return inFlight === 0 && next !== null && next > dueAt && next % 60_000 === 0;
}

/** The recording directory, except that CreateChat first waits for `hold` (and then maybe never answers). */
function directory(hold: (scope: Scope, chat: ChatRequest) => Promise<void>): AgentDirectory & { entered: number } {
  const d = {
    entered: 0,
    require: (scope: Scope, agentId: string) => h.agents.require(scope, agentId),
    startChat: async (scope: Scope, chat: ChatRequest) => {
      d.entered++;
      await hold(scope, chat);
      return h.agents.startChat(scope, chat);
    },
  };
  return d;
}

/** Never settles until the caller gives up (the scheduler aborts its calls when its lease ends). */
function untilAborted(scope: Scope): Promise<never> {
  return new Promise((_, reject) => scope.signal?.addEventListener('abort', () => reject(errors.unavailable('the agents service')), { once: true }));
}

describe('exactly-once runs', () => {
  it('exactly once — a replica that dies after its claim, before CreateChat: another starts the run once, after the lease, as the same run', async () => {
    const s = await dueSchedule();
    // The dead replica: its claim is all it did.
    const dead = mine(await h.due.claim(1_500, 1_000), s.scheduleId)!;
    expect(dead).toMatchObject({ dueAt: s.dueAt });
    const other = h.scheduler({ leaseMs: 5_000 });
    await other.tick();
    expect(chatsOf(s.agentId)).toEqual([]);
    await expect.poll(async () => (await other.tick(), chatsOf(s.agentId).length), { timeout: 10_000, interval: 100 }).toBe(1);
    expect(Date.now()).toBeGreaterThanOrEqual(dead.leaseUntil - 50);
    expect(chatsOf(s.agentId)[0]).toMatchObject({ userId: s.scope.userId, title: SCHEDULED_TITLE, idempotencyKey: s.key });
    expect(await acknowledged(s.scheduleId, s.dueAt)).toBe(true);
    await other.tick();
    expect(chatsOf(s.agentId)).toHaveLength(1);
    expect(callsWith(s.key)).toBe(1);
  });

  it('exactly once — a scheduler stopped while its CreateChat never answers: the run starts once, on the next replica', async () => {
    const s = await dueSchedule();
    const outcomes: RunOutcome[] = [];
    const stuck = directory(untilAborted);
    const a = h.scheduler({ leaseMs: 800, agents: stuck, observe: (o) => void outcomes.push(o) });
    a.start();
    await expect.poll(() => stuck.entered, { timeout: 5_000 }).toBeGreaterThan(0);
    const stopping = a.stop();
    const b = h.scheduler({ leaseMs: 5_000 });
    b.start();
    await expect.poll(() => chatsOf(s.agentId).length, { timeout: 10_000, interval: 50 }).toBe(1);
    await Promise.all([stopping, b.stop()]);
    // The stuck call was given up when A's lease ended, and A left the run to others.
    expect(outcomes).toContain('retried');
    expect(outcomes).not.toContain('started');
    expect(chatsOf(s.agentId)[0]!.idempotencyKey).toBe(s.key);
    expect(await acknowledged(s.scheduleId, s.dueAt)).toBe(true);
  });

  it('exactly once — a replica that dies after CreateChat, before the ack: the retry gets the same chat, no second one', async () => {
    const s = await dueSchedule();
    const dead = mine(await h.due.claim(1_000, 1_000), s.scheduleId)!;
    const chatId = await h.agents.startChat(s.scope, { agentId: s.agentId, title: SCHEDULED_TITLE, idempotencyKey: runIdempotencyKey(dead) });
    // ...and it dies here, its run claimed and not acknowledged.
    const other = h.scheduler({ leaseMs: 5_000 });
    await expect.poll(async () => (await other.tick(), acknowledged(s.scheduleId, s.dueAt)), { timeout: 10_000, interval: 100 }).toBe(true);
    expect(callsWith(s.key)).toBe(2);
    expect(chatsOf(s.agentId).map((c) => c.chatId)).toEqual([chatId]);
  });

  it('exactly once — a scheduler whose CreateChat succeeds but whose answer never comes: one chat, though agents was asked twice', async () => {
    const s = await dueSchedule();
    const outcomes: RunOutcome[] = [];
    // The chat is made, then the replica freezes until its lease ends: the answer is lost.
    const frozen: AgentDirectory & { entered: number } = {
      entered: 0,
      require: (scope, agentId) => h.agents.require(scope, agentId),
      startChat: async (scope, chat) => {
        frozen.entered++;
        await h.agents.startChat(scope, chat);
        return untilAborted(scope);
      },
    };
    const a = h.scheduler({ leaseMs: 800, agents: frozen, observe: (o) => void outcomes.push(o) });
    a.start();
    await expect.poll(() => chatsOf(s.agentId).length, { timeout: 5_000 }).toBe(1);
    const stopping = a.stop();
    const b = h.scheduler({ leaseMs: 5_000 });
    b.start();
    await expect.poll(() => acknowledged(s.scheduleId, s.dueAt), { timeout: 10_000, interval: 50 }).toBe(true);
    await Promise.all([stopping, b.stop()]);
    expect(outcomes).toContain('retried');
    expect(callsWith(s.key)).toBe(2);
    expect(chatsOf(s.agentId)).toHaveLength(1);
  });

  it('exactly once — two schedulers whose leases run out in the middle of CreateChat: calls repeat, chats do not', async () => {
    const runs = await Promise.all(Array.from({ length: 20 }, () => dueSchedule()));
    // Up to 2.5 leases per call, without heeding the abort (a call may well finish on the server
    // after its client gave up): many runs are taken over while their first call is out.
    const slow = directory(() => sleep(Math.random() * 150));
    const [a, b] = [h.scheduler({ leaseMs: 60, tickMs: 5, batch: 20, agents: slow }), h.scheduler({ leaseMs: 60, tickMs: 5, batch: 20, agents: slow })];
    a.start();
    b.start();
    await expect.poll(async () => (await Promise.all(runs.map((r) => acknowledged(r.scheduleId, r.dueAt)))).every(Boolean), { timeout: 20_000, interval: 50 }).toBe(true);
    await Promise.all([a.stop(), b.stop()]);
    for (const r of runs) expect(chatsOf(r.agentId).map((c) => c.idempotencyKey)).toEqual([r.key]);
    const calls = runs.reduce((n, r) => n + callsWith(r.key), 0);
    console.info(`exactly-once: 20 runs, ${calls} CreateChat calls, 20 chats`);
    expect(calls).toBeGreaterThan(20);
  });

  it('exactly once — a run whose chat keeps failing transiently stays claimed and is retried; a permanent error moves it on', async () => {
    const transient = await dueSchedule();
    const permanent = await dueSchedule();
    let failing = true;
    const flaky = directory(async (_scope, chat) => {
      if (chat.idempotencyKey === permanent.key) throw errors.invalidArgument('title is not acceptable', 'title');
      if (failing) throw errors.unavailable('the agents service');
    });
    const replica = h.scheduler({ leaseMs: 300, agents: flaky });
    await replica.tick();
    expect(await acknowledged(permanent.scheduleId, permanent.dueAt)).toBe(true);
    expect(chatsOf(permanent.agentId)).toEqual([]);
    expect(await acknowledged(transient.scheduleId, transient.dueAt)).toBe(false);
    expect(await h.redis.hget(h.due.keys.inflight, transient.scheduleId)).toMatch(new RegExp(`^${transient.dueAt}:\\d+$`));
    failing = false;
    await expect.poll(async () => (await replica.tick(), chatsOf(transient.agentId).length), { timeout: 5_000, interval: 50 }).toBe(1);
    expect(chatsOf(transient.agentId)[0]!.idempotencyKey).toBe(transient.key);
    expect(await acknowledged(transient.scheduleId, transient.dueAt)).toBe(true);
  });
});
