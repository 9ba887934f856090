import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedis, type RedisClient } from '@workspace/platform';
import { dueKeys, userKeys } from '../services/automations/src/adapters/keys.js';
import { upload } from './support/files.js';
import { startPrivateNats, startPrivateRedis, type PrivateServer } from './support/private-servers.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * Redis and NATS die (SIGKILL) under a stack of their own: private servers started here (S3 is
 * the shared one). Meanwhile every request is answered in time with 503 UNAVAILABLE and
 * Retry-After, never a 500 or a hang; once the server is back on the same port and data, the
 * stack recovers by itself, nothing acknowledged before is lost, and the work NATS carries (the
 * Agent-delete cascade, chat threads) completes. The scaled topology brings nothing here: one run.
 */
const infra = inject('infra');
const single = infra.topology !== 'scaled';
/** The stack's gRPC deadline (GRPC_DEADLINE_MS) plus a margin: no answer may take longer. */
const DEADLINE_MS = 5_000 + 2_000;
const RECOVERY = { timeout: 30_000, interval: 200 };

let redisServer: PrivateServer;
let natsServer: PrivateServer;
let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  if (!single) return;
  [redisServer, natsServer] = await Promise.all([startPrivateRedis(), startPrivateNats()]);
  stack = await startStack({ infra: { redisUrl: redisServer.url, natsUrl: natsServer.url, s3: infra.s3, sources: { ...infra.sources, redis: 'local', nats: 'local' } } });
  redis = createRedis({ url: redisServer.url, name: 'faults-e2e' });
  redis.on('error', () => undefined); // it is down on purpose for a while
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
  await Promise.all([redisServer?.dispose(), natsServer?.dispose()]);
});

/** A request with its duration. */
async function timed(send: () => Promise<ApiResponse>): Promise<ApiResponse & { ms: number }> {
  const t = Date.now();
  const res = await send();
  return { ...res, ms: Date.now() - t };
}

const threadsOf = async (u: ApiUser): Promise<{ threadId: string; agentId: string; title: string }[]> => {
  const res = await u.request('GET', '/v1/agent/projects');
  expect(res.status, res.text).toBe(200);
  return res.body.projects.flatMap((p: { threads: unknown[] }) => p.threads);
};

async function agentOf(u: ApiUser, name: string): Promise<string> {
  const res = await u.request('POST', '/v1/agents', { name });
  expect(res.status, res.text).toBe(201);
  return res.body.agentId;
}

describe.runIf(single)('faults: backends', () => {
  it('faults — Redis killed: every service answers 503 UNAVAILABLE with Retry-After in time; restarted on its data, the stack recovers and nothing acknowledged is lost', async () => {
    const u = await stack.user();
    const agentId = await agentOf(u, 'Before the outage');
    expect((await u.request('POST', '/v1/agent/projects', { name: 'kept' })).status).toBe(201);
    expect((await upload(stack.url, u, { content: 'kept bytes' }, { path: '/files/kept.txt' })).status).toBe(200);
    const schedule = await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 0 * * *' });
    expect(schedule.status, schedule.text).toBe(201);

    await redisServer.kill();
    const calls: [string, () => Promise<ApiResponse>][] = [
      ['GET agent (agents)', () => u.request('GET', `/v1/agents/${agentId}`)],
      ['POST agent (agents)', () => u.request('POST', '/v1/agents', { name: 'During' })],
      ['GET projects (projects)', () => u.request('GET', '/v1/agent/projects')],
      ['POST project (projects)', () => u.request('POST', '/v1/agent/projects', { name: 'during' })],
      ['GET files (files)', () => u.request('GET', '/v1/agent/files?path=/files')],
      ['upload (files)', () => upload(stack.url, u, { content: 'during' }, { path: '/files/during.txt' })],
      ['GET schedules (automations)', () => u.request('GET', `/v1/agents/${agentId}/schedules`)],
      ['POST schedule (automations)', () => u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 1 * * *' })],
    ];
    // Twice: at once (connections just broke) and again (clients now reconnecting).
    for (const round of [1, 2]) {
      const answers = await Promise.all(calls.map(async ([name, send]) => ({ name, round, ...(await timed(send)) })));
      const seen = answers.map(({ name, status, body, headers, ms }) => ({ name, round, status, code: body?.error?.code, retryAfter: headers.get('retry-after'), inTime: ms < DEADLINE_MS }));
      expect(seen).toEqual(calls.map(([name]) => ({ name, round, status: 503, code: 'UNAVAILABLE', retryAfter: '1', inTime: true })));
    }

    await redisServer.start();
    await expect.poll(async () => (await u.request('GET', `/v1/agents/${agentId}`)).status, RECOVERY).toBe(200);
    await expect.poll(async () => (await u.request('GET', '/v1/agent/projects')).status, RECOVERY).toBe(200);
    await expect.poll(async () => (await u.request('GET', '/v1/agent/files?path=/files')).status, RECOVERY).toBe(200);
    await expect.poll(async () => (await u.request('GET', `/v1/agents/${agentId}/schedules`)).status, RECOVERY).toBe(200);
    // What was acknowledged before the kill is there (AOF: a write is in the file before its reply).
    expect((await u.request('GET', `/v1/agents/${agentId}`)).body.config.name).toBe('Before the outage');
    expect((await u.request('GET', '/v1/agent/projects')).body.projects.map((p: { name: string }) => p.name)).toContain('kept');
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/kept.txt')).body.content).toBe('kept bytes');
    expect((await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules.map((s: { scheduleId: string }) => s.scheduleId)).toContain(schedule.body.scheduleId);
    // And new writes work again.
    expect((await u.request('POST', '/v1/agents', { name: 'After' })).status).toBe(201);
    expect((await u.request('POST', '/v1/agent/projects', { name: 'after' })).status).toBe(201);
    expect((await upload(stack.url, u, { content: 'after' }, { path: '/files/after.txt' })).status).toBe(200);
    expect((await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 2 * * *' })).status).toBe(201);
  });

  it('faults — NATS killed: an Agent deleted meanwhile is 204 and its cascade (schedule, thread) completes after NATS is back; a scheduled run due meanwhile completes', async () => {
    const u = await stack.user();
    const namespace = stack.services.automations!.env.DUE_INDEX_NAMESPACE;
    const keys = userKeys(u.sub, namespace);
    const due = dueKeys(namespace);
    // Agent A: a schedule and a chat (whose thread reaches projects over NATS).
    const doomed = await agentOf(u, 'Doomed');
    const { scheduleId: doomedSchedule } = (await u.request('POST', `/v1/agents/${doomed}/schedules`, { cron: '* * * * *' })).body;
    const chat = await u.request('POST', `/v1/agents/${doomed}/chats`, { title: 'doomed chat' });
    expect(chat.status, chat.text).toBe(201);
    await expect.poll(async () => (await threadsOf(u)).map((t) => t.threadId), RECOVERY).toContain(chat.body.chatId);
    // Agent B: a schedule that comes due while NATS is down.
    const kept = await agentOf(u, 'Scheduled');
    const { scheduleId: keptSchedule } = (await u.request('POST', `/v1/agents/${kept}/schedules`, { cron: '* * * * *' })).body;

    await natsServer.kill();
    const deleted = await timed(() => u.request('DELETE', `/v1/agents/${doomed}`));
    expect({ status: deleted.status, inTime: deleted.ms < DEADLINE_MS }, deleted.text).toEqual({ status: 204, inTime: true });
    expect((await u.request('GET', `/v1/agents/${doomed}/schedules`)).status).toBe(404);
    // Instead of waiting up to a minute: make the run due now, as the minute turning would.
    expect(await redis.zadd(due.index, 'XX', 'CH', Date.now(), keptSchedule)).toBe(1);
    // The cascade travels over NATS: while it is down, the schedule's records are still there.
    expect(await redis.exists(keys.schedule(doomedSchedule))).toBe(1);

    await natsServer.start();
    // The cascade completes: the schedule's records and due run are gone, the chat's thread too.
    await expect
      .poll(async () => (await redis.exists(keys.schedule(doomedSchedule), keys.schedules(doomed))) + Number((await redis.zscore(due.index, doomedSchedule)) !== null), RECOVERY)
      .toBe(0);
    await expect.poll(async () => (await threadsOf(u)).filter((t) => t.agentId === doomed), RECOVERY).toEqual([]);
    // The scheduled run completed: a chat (one more if a minute turned meanwhile), and its thread reached projects over NATS.
    const runs = async () => ((await u.request('GET', `/v1/agents/${kept}/chats`)).body.chats ?? []).filter((c: { title: string }) => c.title === 'Scheduled run');
    await expect.poll(async () => (await runs()).length, RECOVERY).toBeGreaterThan(0);
    const [run] = await runs();
    await expect.poll(async () => (await threadsOf(u)).map((t) => t.threadId), RECOVERY).toContain(run.chatId);
    // And new events flow: a chat made now shows up as a thread.
    const after = await u.request('POST', `/v1/agents/${kept}/chats`, { title: 'after' });
    expect(after.status, after.text).toBe(201);
    await expect.poll(async () => (await threadsOf(u)).map((t) => t.threadId), RECOVERY).toContain(after.body.chatId);
  });
});
