import { createHmac, randomUUID } from 'node:crypto';
import { type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueKeys } from '../services/automations/src/adapters/keys.js';
import { testRedis } from './support/backends.js';
import { request, startStack, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
let redis: RedisClient;
/** Our own due index: stacks of other suites on the same Redis must not run these schedules. */
const DUE_INDEX_NAMESPACE = `alias-runs-${randomUUID()}`;
const DUE = dueKeys(DUE_INDEX_NAMESPACE);
beforeAll(async () => {
  stack = await startStack({ env: { DUE_INDEX_NAMESPACE } });
  redis = testRedis('alias-runs-e2e');
});
afterAll(async () => {
  await redis?.del(DUE.index, DUE.runs, DUE.inflight);
  await redis?.quit();
  await stack?.stop();
});

function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}

function hook(triggerId: string, secret: string, body = '{}') {
  return request(`${stack.url}/v1/hooks/${triggerId}`, { method: 'POST', headers: { 'x-signature': signature(secret, body) }, body });
}

/** An Agent with two configs, and `prod` naming the first. */
async function agentWithAlias(u: ApiUser) {
  const a = (await u.request('POST', '/v1/agents', { name: 'Runs' })).body;
  const b = (await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, goal: 'v2' })).body;
  expect((await u.request('PUT', `/v1/agents/${a.agentId}/aliases/prod`, { configId: a.currentConfigId })).status).toBe(201);
  return { agentId: a.agentId as string, first: a.currentConfigId as string, second: b.currentConfigId as string };
}

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').filter((l) => l.startsWith(name) && l.includes(labels));
  return line.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('aliases — schedules and triggers run through them', () => {
  it('aliases — a trigger fired after its alias moved starts a chat on the new config', async () => {
    const u = await stack.user();
    const { agentId, first, second } = await agentWithAlias(u);
    const created = await u.request('POST', `/v1/agents/${agentId}/triggers`, { name: 'CI', alias: 'prod' });
    expect(created.status, created.text).toBe(201);
    expect(created.body.alias).toBe('prod');
    expect((await u.request('GET', `/v1/agents/${agentId}/triggers`)).body.triggers[0].alias).toBe('prod');
    const before = await hook(created.body.triggerId, created.body.secret);
    expect(before.status, before.text).toBe(202);
    const chat1 = (await u.request('GET', `/v1/agents/${agentId}/chats/${before.body.chatId}`)).body;
    expect(chat1).toMatchObject({ configId: first, alias: 'prod' });
    expect((await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { configId: second }, { 'if-match': `"${first}"` })).status).toBe(200);
    const after = await hook(created.body.triggerId, created.body.secret);
    expect(after.status).toBe(202);
    const chat2 = (await u.request('GET', `/v1/agents/${agentId}/chats/${after.body.chatId}`)).body;
    expect(chat2).toMatchObject({ configId: second, alias: 'prod' });
    expect(chat2.config.configId).toBe(second);
  });

  it('aliases — a trigger whose alias was deleted starts no chat: 404 ALIAS_NOT_FOUND, logged and counted', async () => {
    const u = await stack.user();
    const { agentId } = await agentWithAlias(u);
    const created = (await u.request('POST', `/v1/agents/${agentId}/triggers`, { alias: 'prod' })).body;
    const counted = async () => metricValue(await stack.metricsOf('automations'), 'automations_alias_gone_total');
    const before = await counted();
    expect((await u.request('DELETE', `/v1/agents/${agentId}/aliases/prod`)).status).toBe(204);
    const res = await hook(created.triggerId, created.secret);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ALIAS_NOT_FOUND');
    expect((await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats).toHaveLength(0);
    await expect.poll(counted).toBe(before + 1);
    await expect.poll(() => stack.logsOf('automations').some((l) => l.triggerId === created.triggerId && String(l.msg).includes('alias is gone'))).toBe(true);
  });

  it('aliases — a scheduled run starts its chat on the config the alias names at run time', async () => {
    const u = await stack.user();
    const { agentId, first, second } = await agentWithAlias(u);
    const schedule = await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 0 1 1 *', alias: 'prod' });
    expect(schedule.status, schedule.text).toBe(201);
    expect(schedule.body.alias).toBe('prod');
    expect((await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { configId: second })).status).toBe(200);
    // Due now, as the minute turning would make it.
    expect(await redis.zadd(DUE.index, 'XX', 'CH', Date.now(), schedule.body.scheduleId)).toBe(1);
    await expect.poll(async () => (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats.length, { timeout: 10_000, interval: 100 }).toBe(1);
    const [chat] = (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats;
    expect(chat).toMatchObject({ configId: second, alias: 'prod', title: 'Scheduled run' });
    expect(chat.configId).not.toBe(first);
  });

  it('aliases — a scheduled run whose alias is gone starts no chat and is counted as alias-gone', async () => {
    const u = await stack.user();
    const { agentId } = await agentWithAlias(u);
    const schedule = (await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 0 1 1 *', alias: 'prod' })).body;
    const counted = async () => metricValue(await stack.metricsOf('automations'), 'automations_runs_total', 'outcome="alias-gone"');
    const before = await counted();
    expect((await u.request('DELETE', `/v1/agents/${agentId}/aliases/prod`)).status).toBe(204);
    expect(await redis.zadd(DUE.index, 'XX', 'CH', Date.now(), schedule.scheduleId)).toBe(1);
    await expect.poll(counted, { timeout: 10_000, interval: 100 }).toBe(before + 1);
    expect((await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats).toHaveLength(0);
    // The schedule carries on to its next run.
    await expect.poll(async () => Date.parse((await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules[0].nextRunAt)).toBeGreaterThan(Date.now());
  });

  it('aliases — schedules and triggers refuse an unknown alias (404 ALIAS_NOT_FOUND) and a wrong type (400)', async () => {
    const u = await stack.user();
    const { agentId } = await agentWithAlias(u);
    for (const [path, body] of [['schedules', { cron: '* * * * *', alias: 'nope' }], ['triggers', { alias: 'nope' }], ['triggers', { alias: 'Not Valid' }]] as const) {
      const res = await u.request('POST', `/v1/agents/${agentId}/${path}`, body);
      expect(res.status, res.text).toBe(404);
      expect(res.body.error.code).toBe('ALIAS_NOT_FOUND');
    }
    const wrong = await u.request('POST', `/v1/agents/${agentId}/triggers`, { alias: 3 });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.field).toBe('alias');
    expect((await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules).toEqual([]);
  });
});
