import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type RedisClient } from '@workspace/platform';
import { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueKeys } from '../services/automations/src/adapters/keys.js';
import { runIdempotencyKey, SCHEDULED_TITLE } from '../services/automations/src/domain/scheduler.js';
import { testRedis } from './support/backends.js';
import { killProcesses, replicaKeys, reviveProcesses } from './support/processes.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

/**
 * Exactly-once schedule runs through the real processes: automations SIGKILLed with a run
 * claimed, and the state a replica leaves when it dies after CreateChat and before its ack. A
 * short lease, so that a claim left behind comes back within seconds.
 */
const LEASE_MS = 2_000;
let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  stack = await startStack({ env: { SCHEDULER_LEASE_MS: String(LEASE_MS), SCHEDULER_TICK_MS: '200' } });
  DUE = dueKeys(stack.services.automations!.env.DUE_INDEX_NAMESPACE);
  redis = testRedis('schedules-exactly-once-e2e');
});
afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

/** The stack's own due index (every test stack has one). */
let DUE: ReturnType<typeof dueKeys>;
const replicas = (name: string) => replicaKeys(stack, name);
const kill = (keys: string[]) => killProcesses(stack, keys);
const revive = (keys: string[]) => reviveProcesses(stack, keys);

async function scheduled(u: ApiUser, cron: string): Promise<{ agentId: string; scheduleId: string }> {
  const agent = await u.request('POST', '/v1/agents', { name: 'Exactly once' });
  expect(agent.status).toBe(201);
  const schedule = await u.request('POST', `/v1/agents/${agent.body.agentId}/schedules`, { cron });
  expect(schedule.status).toBe(201);
  return { agentId: agent.body.agentId, scheduleId: schedule.body.scheduleId };
}

async function chats(u: ApiUser, agentId: string): Promise<{ chatId: string; title: string; createdAt: string }[]> {
  const res = await u.request('GET', `/v1/agents/${agentId}/chats`);
  return res.status === 200 ? res.body.chats : [];
}

describe('schedules exactly once', () => {
  it('exactly once — automations SIGKILLed with the run claimed and its chat not started: after the restart the run starts one chat', async () => {
    const u = await stack.user();
    // Once a year: the run forced due here is the only one (an every-minute cron could also come
    // due on its own while the processes restart, and rightly start a chat of its own).
    const { agentId, scheduleId } = await scheduled(u, '0 0 1 1 *');
    // With agents down no CreateChat can succeed: the claim is all automations gets done.
    await kill(replicas('agents'));
    const dueAt = Date.now();
    expect(await redis.zadd(DUE.index, 'XX', 'CH', dueAt, scheduleId)).toBe(1);
    await expect.poll(() => redis.hget(DUE.inflight, scheduleId), { timeout: 10_000, interval: 50 }).toMatch(new RegExp(`^${dueAt}:`));
    await kill(replicas('automations'));
    await revive(replicas('agents'));
    await revive(replicas('automations'));
    await expect.poll(async () => (await chats(u, agentId)).length, { timeout: 20_000, interval: 200 }).toBe(1);
    expect((await chats(u, agentId))[0]).toMatchObject({ title: SCHEDULED_TITLE });
    await expect.poll(() => redis.hexists(DUE.inflight, scheduleId), { timeout: 5_000 }).toBe(0);
    // The gateway reaches the revived service once its channel has reconnected (503 with Retry-After until then).
    // With two replicas, one answering does not mean the next request's does: keep the answer polled.
    let listed: { status: number; body: { schedules: { nextRunAt: string }[] } } | undefined;
    await expect
      .poll(async () => (listed = await u.request('GET', `/v1/agents/${agentId}/schedules`)).status, { timeout: 30_000, interval: 250 })
      .toBe(200);
    const schedule = listed!.body.schedules[0]!;
    const next = Date.parse(schedule.nextRunAt);
    expect(next % 60_000).toBe(0);
    expect(next).toBeGreaterThan(dueAt);
    // A lease and a few ticks later, still one chat for the run that was due.
    await sleep(LEASE_MS + 500);
    expect(await chats(u, agentId)).toHaveLength(1);
  });

  it('exactly once — a replica that died after CreateChat and before its ack: the run is taken over and gets that same chat', async () => {
    const u = await stack.user();
    // Once a year: nothing but the run made here is due during the test.
    const { agentId, scheduleId } = await scheduled(u, '0 0 1 1 *');
    const dueAt = Date.now() - 1_000;
    // What the dead replica left: its claim (run in flight, lease not yet over)...
    await redis
      .multi()
      .hset(DUE.inflight, scheduleId, `${dueAt}:${dueAt}`)
      .zadd(DUE.index, 'XX', Date.now() + LEASE_MS, scheduleId)
      .exec();
    // ...and the chat its CreateChat made, whose answer it never acted on.
    const agents = createClient(AgentsServiceService, { serviceName: 'agents', address: `127.0.0.1:${stack.services.agents!.port}`, deadlineMs: 5_000 });
    const first = await agents.createChat({ agentId, title: SCHEDULED_TITLE, idempotencyKey: runIdempotencyKey({ scheduleId, dueAt }) }, { userId: u.sub });
    agents.close();
    await expect.poll(() => redis.hexists(DUE.inflight, scheduleId), { timeout: 15_000, interval: 100 }).toBe(0);
    const [schedule] = (await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules;
    expect(new Date(schedule.nextRunAt).getUTCMonth()).toBe(0);
    expect(Date.parse(schedule.nextRunAt)).toBeGreaterThan(Date.now());
    expect((await chats(u, agentId)).map((c) => c.chatId)).toEqual([first.chatId]);
    const agent = (await u.request('GET', `/v1/agents/${agentId}`)).body;
    expect(agent.chatCount).toBe(1);
  });
});
