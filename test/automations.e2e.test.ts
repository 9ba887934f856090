import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueKeys, triggerOwnerKey, userKeys } from '../services/automations/src/adapters/keys.js';
import { request, sharedStack, startStack, type ApiUser, type SharedStack } from './support/stack.js';
import { testRedis } from './support/backends.js';

let stack: SharedStack;
let redis: RedisClient;
beforeAll(async () => {
  stack = sharedStack();
  NAMESPACE = stack.services.automations!.env.DUE_INDEX_NAMESPACE!;
  DUE = dueKeys(NAMESPACE);
  redis = testRedis('automations-e2e');
});
afterAll(async () => {
  await redis?.quit();
});

const ID = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9a-f]{32}$`));
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
/** The stack's own namespace and due index (every test stack has one). */
let NAMESPACE: string;
let DUE: ReturnType<typeof dueKeys>;

async function agentOf(u: ApiUser, name = 'Automated'): Promise<string> {
  const res = await u.request('POST', '/v1/agents', { name });
  expect(res.status).toBe(201);
  return res.body.agentId as string;
}

/** The contract's signature, computed here independently of the service's code. */
function signature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}

/**
 * Sends 1.25 MiB chunked (no Content-Length) and never ends the body: the answer must come once
 * the limit is passed, without waiting for the rest.
 */
function chunkedOverLimit(triggerId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${stack.url}/v1/hooks/${triggerId}`, { method: 'POST', headers: { 'x-signature': 'sha256=00' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    for (let i = 0; i < 5; i++) req.write(Buffer.alloc(256 * 1024, 'b'));
  });
}

function hook(triggerId: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return request(`${stack.url}/v1/hooks/${triggerId}`, { method: 'POST', headers, body });
}

describe('schedules', () => {
  it('schedules — create (defaults UTC, enabled), list newest first, delete 204 then 404 SCHEDULE_NOT_FOUND', async () => {
    const u = await stack.user();
    const agentId = await agentOf(u);
    const created = await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '*/15 * * * *' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ scheduleId: ID('sch'), agentId, cron: '*/15 * * * *', timezone: 'UTC', enabled: true, nextRunAt: ISO, createdAt: ISO, alias: null });
    expect(Date.parse(created.body.nextRunAt) % (15 * 60_000)).toBe(0);
    await sleep(2);
    const berlin = await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 9 * * MON-FRI', timezone: 'Europe/Berlin', enabled: false });
    expect(berlin.body).toMatchObject({ timezone: 'Europe/Berlin', enabled: false, nextRunAt: null });
    const list = await u.request('GET', `/v1/agents/${agentId}/schedules`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ schedules: [berlin.body, created.body] });
    const path = `/v1/agents/${agentId}/schedules/${created.body.scheduleId}`;
    expect((await u.request('DELETE', path)).status).toBe(204);
    const again = await u.request('DELETE', path);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('SCHEDULE_NOT_FOUND');
    expect((await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules).toEqual([berlin.body]);
  });

  it.each([
    [{ cron: '* * * *' }, 'cron'],
    [{ cron: '*/5 * * * * *' }, 'cron'],
    [{ cron: '@daily' }, 'cron'],
    [{ cron: '61 * * * *' }, 'cron'],
    [{ cron: 5 }, 'cron'],
    [{}, 'cron'],
    [{ cron: '* * * * *', timezone: 'Mars/Olympus_Mons' }, 'timezone'],
    [{ cron: '* * * * *', timezone: '+02:00' }, 'timezone'],
    [{ cron: '* * * * *', enabled: 'yes' }, 'enabled'],
    [{ cron: '* * * * *', every: 'day' }, 'every'],
  ])('schedules — %j is 400 INVALID_ARGUMENT naming %s', async (body, field) => {
    const u = await stack.user();
    const res = await u.request('POST', `/v1/agents/${await agentOf(u)}/schedules`, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
  });

  it('schedules — a due "* * * * *" schedule starts exactly one chat titled "Scheduled run" within 10 s, then waits for the next minute', async () => {
    const u = await stack.user();
    const agentId = await agentOf(u);
    const { scheduleId } = (await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '* * * * *' })).body;
    // Instead of waiting up to a minute: make it due now, as the minute turning would.
    const dueAt = Date.now();
    expect(await redis.zadd(DUE.index, 'XX', 'CH', dueAt, scheduleId)).toBe(1);
    await expect.poll(async () => (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats.length, { timeout: 10_000, interval: 100 }).toBe(1);
    const startedAfter = Date.now() - dueAt;
    const [chat] = (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats;
    expect(chat).toMatchObject({ agentId, title: 'Scheduled run' });
    console.info(`e2e: scheduled chat visible ${startedAfter} ms after its due time`);
    // The run moved on to the next whole minute (which may be only seconds away)...
    const [schedule] = (await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules;
    const next = Date.parse(schedule.nextRunAt);
    expect(next % 60_000).toBe(0);
    expect(next).toBeGreaterThan(dueAt);
    // ...and no other chat started for the run that was due: any before that next minute would be one.
    await sleep(1_500);
    const chats = (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats as { createdAt: string }[];
    expect(chats.filter((c) => Date.parse(c.createdAt) < next)).toHaveLength(1);
  });
});

describe('agent list', () => {
  it('list — items carry activeScheduleCount (enabled schedules) and nextRunAt (the earliest of theirs, else null)', async () => {
    const u = await stack.user();
    const busy = await agentOf(u, 'Busy');
    const idle = await agentOf(u, 'Idle');
    const hourly = (await u.request('POST', `/v1/agents/${busy}/schedules`, { cron: '0 * * * *' })).body;
    const minutely = (await u.request('POST', `/v1/agents/${busy}/schedules`, { cron: '* * * * *' })).body;
    await u.request('POST', `/v1/agents/${busy}/schedules`, { cron: '* * * * *', enabled: false });
    await u.request('POST', `/v1/agents/${idle}/schedules`, { cron: '* * * * *', enabled: false });
    const list = await u.request('GET', '/v1/agents');
    expect(list.status).toBe(200);
    const byId = new Map(list.body.agents.map((a: { agentId: string }) => [a.agentId, a]));
    expect(byId.get(busy)).toMatchObject({ activeScheduleCount: 2, nextRunAt: [hourly.nextRunAt, minutely.nextRunAt].sort()[0] });
    expect(byId.get(idle)).toMatchObject({ activeScheduleCount: 0, nextRunAt: null });
  });
});

describe('webhook triggers', () => {
  it('triggers — the secret is shown once; a signed body of any type answers 202 and starts a chat "Webhook: <name>"', async () => {
    const u = await stack.user();
    const agentId = await agentOf(u);
    const created = await u.request('POST', `/v1/agents/${agentId}/triggers`, { name: 'CI' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ triggerId: ID('trg'), agentId, name: 'CI', createdAt: ISO, secret: expect.any(String), alias: null });
    const { triggerId, secret } = created.body;
    const listed = await u.request('GET', `/v1/agents/${agentId}/triggers`);
    expect(listed.body).toEqual({ triggers: [{ triggerId, agentId, name: 'CI', createdAt: created.body.createdAt, alias: null }] });
    expect(listed.text).not.toContain(secret);

    const json = '{"status":"green"}';
    const ok = await hook(triggerId, json, { 'content-type': 'application/json', 'x-signature': signature(secret, json) });
    expect(ok.status).toBe(202);
    expect(ok.body).toEqual({ triggerId, chatId: ID('cht') });
    const bytes = Buffer.from([0, 255, 1, 254]);
    expect((await hook(triggerId, bytes, { 'content-type': 'application/octet-stream', 'X-Signature': signature(secret, bytes) })).status).toBe(202);
    expect((await hook(triggerId, '', { 'x-signature': signature(secret, '') })).status).toBe(202);
    const chats = (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats;
    expect(chats.map((c: { title: string }) => c.title)).toEqual(['Webhook: CI', 'Webhook: CI', 'Webhook: CI']);
    expect(chats[2].chatId).toBe(ok.body.chatId);
  });

  it('triggers — a missing or wrong signature is 401 UNAUTHENTICATED, an unknown trigger 404 TRIGGER_NOT_FOUND, over 1 MiB 413', async () => {
    const u = await stack.user();
    const agentId = await agentOf(u);
    const { triggerId, secret } = (await u.request('POST', `/v1/agents/${agentId}/triggers`, {})).body;
    const body = '{"a":1}';
    for (const header of [undefined, signature('wrong', body), signature(secret, '{"a":2}'), `sha1=${signature(secret, body).slice(7)}`]) {
      const res = await hook(triggerId, body, header === undefined ? {} : { 'x-signature': header });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
    }
    const unknown = await hook('trg_00000000000000000000000000000000', body, { 'x-signature': signature(secret, body) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('TRIGGER_NOT_FOUND');
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    const tooBig = await hook(triggerId, big, { 'x-signature': signature(secret, big) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Chunked, with no Content-Length to refuse it up front: cut off once past the limit.
    expect(await chunkedOverLimit(triggerId)).toBe(413);
    expect((await hook(triggerId, Buffer.alloc(1024 * 1024, 'a'), { 'x-signature': signature(secret, Buffer.alloc(1024 * 1024, 'a')) })).status).toBe(202);
    expect((await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats).toHaveLength(1);

    expect((await u.request('DELETE', `/v1/agents/${agentId}/triggers/${triggerId}`)).status).toBe(204);
    expect((await hook(triggerId, body, { 'x-signature': signature(secret, body) })).status).toBe(404);
    expect((await u.request('DELETE', `/v1/agents/${agentId}/triggers/${triggerId}`)).body.error.code).toBe('TRIGGER_NOT_FOUND');
  });
});

describe('automations under an Agent', () => {
  it('automations — every route under an Agent that does not exist, or is another user\'s, answers 404 AGENT_NOT_FOUND', async () => {
    const owner = await stack.user();
    const stranger = await stack.user();
    const agentId = await agentOf(owner);
    for (const id of [agentId, 'agt_00000000000000000000000000000000', 'nope']) {
      for (const [method, path, body] of [
        ['POST', `/v1/agents/${id}/schedules`, { cron: '* * * * *' }],
        ['GET', `/v1/agents/${id}/schedules`],
        ['DELETE', `/v1/agents/${id}/schedules/sch_00000000000000000000000000000000`],
        ['POST', `/v1/agents/${id}/triggers`, { name: 'x' }],
        ['GET', `/v1/agents/${id}/triggers`],
        ['DELETE', `/v1/agents/${id}/triggers/trg_00000000000000000000000000000000`],
      ] as const) {
        const res = await stranger.request(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error.code).toBe('AGENT_NOT_FOUND');
      }
    }
  });

  it('cascade — deleting an Agent removes its schedules and triggers (Redis keys, due runs, hook lookups), also while another stack shares Redis and NATS', async () => {
    // Another deployment on the same Redis and NATS, with a due index of its own: the deletion
    // must still be handled by a consumer that cleans this stack's index, every time (four
    // Agents, so a consumer group shared between the stacks would be caught).
    const other = await startStack();
    try {
      for (let i = 0; i < 4; i++) await cascade();
    } finally {
      await other.stop();
    }
  });
});

/** Creates an Agent with two schedules and a trigger, deletes the Agent, waits until they are gone. */
async function cascade(): Promise<void> {
  const u = await stack.user();
  const agentId = await agentOf(u);
  const schedules: string[] = [];
  for (const cron of ['* * * * *', '0 0 * * *']) schedules.push((await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron })).body.scheduleId);
  const trigger = (await u.request('POST', `/v1/agents/${agentId}/triggers`, { name: 'gone soon' })).body;
  const keys = userKeys(u.sub, NAMESPACE);
  const left = async () =>
    (await redis.exists(keys.schedules(agentId), keys.triggers(agentId), ...schedules.map(keys.schedule), keys.trigger(trigger.triggerId))) +
    (await redis.exists(triggerOwnerKey(trigger.triggerId, NAMESPACE))) +
    (await redis.zmscore(DUE.index, ...schedules)).filter((s) => s !== null).length +
    (await redis.hmget(DUE.runs, ...schedules)).filter((r) => r !== null).length;
  expect(await left()).toBe(5 + 1 + 2 + 2);
  expect((await u.request('DELETE', `/v1/agents/${agentId}`)).status).toBe(204);
  const started = Date.now();
  // Within seconds normally (docs/api/agents.md#delete; well under 1 s here): the bound
  // is wide for a loaded CI machine, and the time is printed.
  await expect.poll(left, { timeout: 20_000, interval: 50 }).toBe(0);
  console.info(`e2e: schedules and triggers of a deleted Agent gone ${Date.now() - started} ms after DELETE answered`);
  const fired = await hook(trigger.triggerId, '{}', { 'x-signature': signature(trigger.secret, '{}') });
  expect(fired.status).toBe(404);
  expect(fired.body.error.code).toBe('TRIGGER_NOT_FOUND');
  expect((await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.error.code).toBe('AGENT_NOT_FOUND');
}
