import { createHmac, randomUUID } from 'node:crypto';
import { type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickByKey } from '../services/agents/src/domain/rollout.js';
import { dueKeys } from '../services/automations/src/adapters/keys.js';
import { testRedis } from './support/backends.js';
import { request, startStack, type ApiUser, type Stack } from './support/stack.js';
import { unzip } from './support/zip.js';

let stack: Stack;
let redis: RedisClient;
/** Our own due index: stacks of other suites on the same Redis must not run these schedules. */
const DUE_INDEX_NAMESPACE = `rollout-${randomUUID()}`;
const DUE = dueKeys(DUE_INDEX_NAMESPACE);
beforeAll(async () => {
  // A small retention, so that reclaiming is seen within a few updates.
  stack = await startStack({ env: { CONFIG_RETENTION: '3', DUE_INDEX_NAMESPACE } });
  redis = testRedis('rollout-e2e');
});
afterAll(async () => {
  await redis?.del(DUE.index, DUE.runs, DUE.inflight);
  await redis?.quit();
  await stack?.stop();
});

type Route = { configId: string; weight: number };

function expectError(res: { status: number; body: { error: Record<string, unknown> } }, status: number, code: string, field?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (field !== undefined) expect((res.body.error.details as { field?: string } | undefined)?.field).toBe(field);
}

/** An Agent with `n` configs (oldest first). */
async function agentWithConfigs(u: ApiUser, n = 3) {
  let agent = (await u.request('POST', '/v1/agents', { name: 'Rollout' })).body;
  const configs: string[] = [agent.currentConfigId];
  for (let i = 1; i < n; i++) {
    const res = await u.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: agent.currentConfigId, goal: `v${i}` });
    expect(res.status, res.text).toBe(200);
    agent = res.body;
    configs.push(agent.currentConfigId);
  }
  return { agentId: agent.agentId as string, configs, current: agent.currentConfigId as string };
}

async function putRouting(u: ApiUser, agentId: string, alias: string, routing: Route[], headers: Record<string, string> = {}) {
  return u.request('PUT', `/v1/agents/${agentId}/aliases/${alias}`, { routing }, headers);
}

async function chat(u: ApiUser, agentId: string, body: Record<string, unknown>) {
  const res = await u.request('POST', `/v1/agents/${agentId}/chats`, body);
  expect(res.status, res.text).toBe(201);
  return res.body as { chatId: string; configId: string; alias: string | null };
}

/** Runs `fn` for 0…n-1, `width` at a time. */
async function inBatches<T>(n: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width) out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => fn(i + j)))));
  return out;
}

function hook(triggerId: string, secret: string, body = '{}') {
  const signature = `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
  return request(`${stack.url}/v1/hooks/${triggerId}`, { method: 'POST', headers: { 'x-signature': signature }, body });
}

describe('rollout — routed aliases', () => {
  it('rollout — PUT routing answers it as sent with configId = the heaviest entry; get, list and history show it; a plain alias has routing null', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const routing = [{ configId: configs[0]!, weight: 30 }, { configId: configs[1]!, weight: 60 }, { configId: configs[2]!, weight: 10 }];
    const put = await putRouting(u, agentId, 'prod', routing);
    expect(put.status, put.text).toBe(201);
    expect(put.body).toMatchObject({ alias: 'prod', agentId, configId: configs[1], routing, description: '' });
    expect(put.headers.get('etag')).toBe(`"${configs[1]}"`);
    const got = await u.request('GET', `/v1/agents/${agentId}/aliases/prod`);
    expect(got.body).toMatchObject({ configId: configs[1], routing });
    expect(got.body.config.configId).toBe(configs[1]);
    // Ties: the first of the heaviest.
    const tie = await putRouting(u, agentId, 'tie', [{ configId: configs[2]!, weight: 50 }, { configId: configs[0]!, weight: 50 }]);
    expect(tie.body.configId).toBe(configs[2]);
    const plain = await u.request('PUT', `/v1/agents/${agentId}/aliases/plain`, { configId: configs[0] });
    expect(plain.body.routing).toBeNull();
    const list = (await u.request('GET', `/v1/agents/${agentId}/aliases`)).body.aliases;
    expect(list.map((a: { alias: string; routing: unknown }) => [a.alias, a.routing])).toEqual([['plain', null], ['prod', routing], ['tie', tie.body.routing]]);
    const history = (await u.request('GET', `/v1/agents/${agentId}/aliases/prod/history`)).body.history;
    expect(history).toEqual([{ configId: configs[1], routing, from: put.body.updatedAt, until: null }]);
    expect((await u.request('GET', `/v1/agents/${agentId}/aliases/plain/history`)).body.history[0].routing).toBeNull();
  });

  it('rollout — invalid routing → 400 INVALID_ARGUMENT naming the field; unknown configs → 404 CONFIG_NOT_FOUND', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const [a, b, c] = configs as [string, string, string];
    const path = `/v1/agents/${agentId}/aliases/prod`;
    const cases: [unknown, string][] = [
      [{ configId: a, routing: [{ configId: a, weight: 50 }, { configId: b, weight: 50 }] }, 'routing'],
      [{ description: 'neither' }, 'configId'],
      [{ routing: [{ configId: a, weight: 50 }] }, 'routing'],
      [{ routing: [] }, 'routing'],
      [{ routing: Array.from({ length: 6 }, () => ({ configId: a, weight: 10 })) }, 'routing'],
      [{ routing: [{ configId: a, weight: 50 }, { configId: b, weight: 40 }] }, 'routing'],
      [{ routing: [{ configId: a, weight: 0 }, { configId: b, weight: 100 }] }, 'routing[0].weight'],
      [{ routing: [{ configId: a, weight: 50.5 }, { configId: b, weight: 49.5 }] }, 'routing[0].weight'],
      [{ routing: [{ configId: a, weight: '50' }, { configId: b, weight: 50 }] }, 'routing[0].weight'],
      [{ routing: [{ configId: a, weight: 50 }, { configId: a, weight: 50 }] }, 'routing[1].configId'],
      [{ routing: [{ configId: a, weight: 50 }, { weight: 50 }] }, 'routing[1].configId'],
      [{ routing: [{ configId: a, weight: 50 }, { configId: b, weight: 50, extra: 1 }] }, 'routing[1].extra'],
      [{ routing: { configId: a, weight: 100 } }, 'routing'],
    ];
    for (const [body, field] of cases) expectError(await u.request('PUT', path, body), 400, 'INVALID_ARGUMENT', field);
    const other = await agentWithConfigs(await stack.user(), 1);
    expectError(await putRouting(u, agentId, 'prod', [{ configId: a, weight: 50 }, { configId: `cfg_${'0'.repeat(32)}`, weight: 50 }]), 404, 'CONFIG_NOT_FOUND');
    expectError(await putRouting(u, agentId, 'prod', [{ configId: 'nonsense', weight: 50 }, { configId: c, weight: 50 }]), 404, 'CONFIG_NOT_FOUND');
    expectError(await putRouting(u, agentId, 'prod', [{ configId: a, weight: 50 }, { configId: other.configs[0]!, weight: 50 }]), 404, 'CONFIG_NOT_FOUND');
    expectError(await u.request('GET', path), 404, 'ALIAS_NOT_FOUND');
  });

  it('rollout — If-Match is checked against configId (the heaviest entry): 412 PRECONDITION_FAILED with the current one', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const [a, b, c] = configs as [string, string, string];
    await putRouting(u, agentId, 'prod', [{ configId: a, weight: 80 }, { configId: b, weight: 20 }]);
    const stale = await putRouting(u, agentId, 'prod', [{ configId: a, weight: 50 }, { configId: c, weight: 50 }], { 'if-match': `"${b}"` });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.body.error.details.currentConfigId).toBe(a);
    const moved = await putRouting(u, agentId, 'prod', [{ configId: c, weight: 60 }, { configId: a, weight: 40 }], { 'if-match': `"${a}"` });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.headers.get('etag')).toBe(`"${c}"`);
    // Back to a plain alias, conditionally too.
    const plain = await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { configId: b }, { 'if-match': `"${c}"` });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ configId: b, routing: null });
  });

  it('rollout — 12 concurrent routed PUTs with the same If-Match: exactly one wins, one period is added, and no pin is left behind', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u, 3);
    const [a, b, c] = configs as [string, string, string];
    await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { configId: a });
    // Each moves configId (the heaviest entry) away from a, so If-Match: a holds for one of them only.
    const bodies = Array.from({ length: 12 }, (_, i) => [{ configId: i % 2 ? b : c, weight: 60 + i }, { configId: a, weight: 40 - i }]);
    const results = await Promise.all(bodies.map((routing) => putRouting(u, agentId, 'prod', routing, { 'if-match': `"${a}"` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(11);
    const winner = results.find((r) => r.status === 200)!.body;
    expect((await u.request('GET', `/v1/agents/${agentId}/aliases/prod/history`)).body.history.map((h: { routing: unknown }) => h.routing)).toEqual([winner.routing, null]);
    // Back to one config and past retention (3): b and c were pinned only by the routing and go.
    expect((await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { configId: a })).status).toBe(200);
    let head = c;
    for (let i = 0; i < 4; i++) head = (await u.request('PATCH', `/v1/agents/${agentId}`, { baseConfigId: head, goal: `after ${i}` })).body.currentConfigId;
    expectError(await u.request('GET', `/v1/agents/${agentId}/versions/${b}`), 404, 'CONFIG_NOT_FOUND');
    expectError(await u.request('GET', `/v1/agents/${agentId}/versions/${c}`), 404, 'CONFIG_NOT_FOUND');
    expect((await u.request('GET', `/v1/agents/${agentId}/versions/${a}`)).status).toBe(200);
  });

  it('rollout — every PUT that changes the config or the routing, weights alone included, starts a history period that records both', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const [a, b] = configs as [string, string];
    const path = `/v1/agents/${agentId}/aliases/prod`;
    await u.request('PUT', path, { configId: a });
    const r1 = [{ configId: a, weight: 90 }, { configId: b, weight: 10 }];
    const r2 = [{ configId: a, weight: 70 }, { configId: b, weight: 30 }];
    const r3 = [{ configId: b, weight: 30 }, { configId: a, weight: 70 }];
    await putRouting(u, agentId, 'prod', r1);
    await putRouting(u, agentId, 'prod', r2);
    await putRouting(u, agentId, 'prod', r2); // the same again: no new period
    await u.request('PUT', path, { routing: r2, description: 'canary' }); // a description alone: no new period
    await putRouting(u, agentId, 'prod', r3); // the same shares in another order: a new routing as sent
    await u.request('PUT', path, { configId: b });
    const history = (await u.request('GET', `${path}/history`)).body.history as { configId: string; routing: Route[] | null; from: string; until: string | null }[];
    expect(history.map((h) => [h.configId, h.routing])).toEqual([[b, null], [a, r3], [a, r2], [a, r1], [a, null]]);
    expect(history[0]!.until).toBeNull();
    for (let i = 1; i < history.length; i++) expect(history[i]!.until).toBe(history[i - 1]!.from);
  });

  it('rollout — every routed config is pinned: retention never reclaims it; once the alias moves away it may go', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u, 2);
    const [a, b] = configs as [string, string];
    await putRouting(u, agentId, 'canary', [{ configId: a, weight: 95 }, { configId: b, weight: 5 }]);
    let current = b;
    for (let i = 0; i < 5; i++) {
      current = (await u.request('PATCH', `/v1/agents/${agentId}`, { baseConfigId: current, goal: `later ${i}` })).body.currentConfigId;
    }
    for (const id of [a, b]) expect((await u.request('GET', `/v1/agents/${agentId}/versions/${id}`)).status).toBe(200);
    // Chats still reach both routed configs.
    const got = new Set((await inBatches(40, 10, (i) => chat(u, agentId, { alias: 'canary', routingKey: `k${i}` }))).map((c) => c.configId));
    expect([...got].every((id) => id === a || id === b)).toBe(true);
    // Moved to a plain alias on the current config: a and b are kept only by the chats pinning them.
    await u.request('PUT', `/v1/agents/${agentId}/aliases/canary`, { configId: current });
    const unchatted = (await agentWithConfigs(u, 2));
    await putRouting(u, unchatted.agentId, 'x', [{ configId: unchatted.configs[0]!, weight: 50 }, { configId: unchatted.configs[1]!, weight: 50 }]);
    await u.request('PUT', `/v1/agents/${unchatted.agentId}/aliases/x`, { configId: unchatted.configs[1] });
    let head = unchatted.configs[1]!;
    for (let i = 0; i < 4; i++) head = (await u.request('PATCH', `/v1/agents/${unchatted.agentId}`, { baseConfigId: head, goal: `g${i}` })).body.currentConfigId;
    expectError(await u.request('GET', `/v1/agents/${unchatted.agentId}/versions/${unchatted.configs[0]}`), 404, 'CONFIG_NOT_FOUND');
  });

  it('rollout — a routing key is sticky; keys spread by weight; without one chats are drawn by weight; a plain alias ignores it', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const [a, b, c] = configs as [string, string, string];
    const routing = [{ configId: a, weight: 50 }, { configId: b, weight: 50 }];
    await putRouting(u, agentId, 'split', routing);
    const sticky = await inBatches(12, 6, () => chat(u, agentId, { alias: 'split', routingKey: 'customer-42' }));
    expect(new Set(sticky.map((x) => x.configId)).size).toBe(1);
    expect(sticky[0]!.configId).toBe(pickByKey(routing, 'customer-42'));
    expect(sticky[0]!.alias).toBe('split');
    const keyed = await inBatches(200, 20, (i) => chat(u, agentId, { alias: 'split', routingKey: `user-${i}` }));
    keyed.forEach((x, i) => expect(x.configId).toBe(pickByKey(routing, `user-${i}`)));
    const onA = keyed.filter((x) => x.configId === a).length;
    expect(onA).toBeGreaterThan(60);
    expect(onA).toBeLessThan(140);
    const drawn = await inBatches(60, 20, () => chat(u, agentId, { alias: 'split' }));
    expect(new Set(drawn.map((x) => x.configId))).toEqual(new Set([a, b]));
    // A plain alias: routingKey is accepted and changes nothing.
    await u.request('PUT', `/v1/agents/${agentId}/aliases/plain`, { configId: a });
    expect((await chat(u, agentId, { alias: 'plain', routingKey: 'anything' })).configId).toBe(a);
    expect((await chat(u, agentId, { routingKey: 'anything' })).configId).toBe(c);
    expectError(await u.request('POST', `/v1/agents/${agentId}/chats`, { alias: 'split', routingKey: '' }), 400, 'INVALID_ARGUMENT', 'routingKey');
    expectError(await u.request('POST', `/v1/agents/${agentId}/chats`, { alias: 'split', routingKey: 'k'.repeat(201) }), 400, 'INVALID_ARGUMENT', 'routingKey');
    expectError(await u.request('POST', `/v1/agents/${agentId}/chats`, { alias: 'split', routingKey: 5 }), 400, 'INVALID_ARGUMENT', 'routingKey');
    expect((await chat(u, agentId, { alias: 'split', routingKey: '🙂'.repeat(200) })).configId).toBe(pickByKey(routing, '🙂'.repeat(200)));
  });

  it('rollout — stats count chats per config since the routing was last set; a description alone keeps them; a plain alias answers its config with 100', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const [a, b, c] = configs as [string, string, string];
    const routing = [{ configId: a, weight: 70 }, { configId: b, weight: 30 }];
    const put = await putRouting(u, agentId, 'prod', routing);
    const stats = async () => (await u.request('GET', `/v1/agents/${agentId}/aliases/prod/stats`)).body;
    expect(await stats()).toEqual({ alias: 'prod', since: put.body.updatedAt, configs: [{ configId: a, weight: 70, chats: 0 }, { configId: b, weight: 30, chats: 0 }] });
    const made = await inBatches(30, 10, (i) => chat(u, agentId, { alias: 'prod', routingKey: `s${i}` }));
    await chat(u, agentId, {}); // not through the alias
    const count = (id: string) => made.filter((x) => x.configId === id).length;
    expect((await stats()).configs).toEqual([{ configId: a, weight: 70, chats: count(a) }, { configId: b, weight: 30, chats: count(b) }]);
    await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { routing, description: 'same routing' });
    expect((await stats()).since).toBe(put.body.updatedAt);
    expect((await stats()).configs.map((x: { chats: number }) => x.chats)).toEqual([count(a), count(b)]);
    // New weights: a new period, counted from zero.
    const next = await putRouting(u, agentId, 'prod', [{ configId: a, weight: 60 }, { configId: c, weight: 40 }]);
    expect(await stats()).toEqual({ alias: 'prod', since: next.body.updatedAt, configs: [{ configId: a, weight: 60, chats: 0 }, { configId: c, weight: 40, chats: 0 }] });
    const plain = await u.request('PUT', `/v1/agents/${agentId}/aliases/plain`, { configId: b });
    await inBatches(3, 3, () => chat(u, agentId, { alias: 'plain', routingKey: 'x' }));
    expect((await u.request('GET', `/v1/agents/${agentId}/aliases/plain/stats`)).body).toEqual({ alias: 'plain', since: plain.body.updatedAt, configs: [{ configId: b, weight: 100, chats: 3 }] });
    expectError(await u.request('GET', `/v1/agents/${agentId}/aliases/nope/stats`), 404, 'ALIAS_NOT_FOUND');
    // Deleted and made again: counted afresh.
    expect((await u.request('DELETE', `/v1/agents/${agentId}/aliases/plain`)).status).toBe(204);
    await u.request('PUT', `/v1/agents/${agentId}/aliases/plain`, { configId: b });
    expect((await u.request('GET', `/v1/agents/${agentId}/aliases/plain/stats`)).body.configs[0].chats).toBe(0);
  });

  it('rollout — triggers and schedules route with their own id as the key', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const routing = [{ configId: configs[0]!, weight: 34 }, { configId: configs[1]!, weight: 33 }, { configId: configs[2]!, weight: 33 }];
    await putRouting(u, agentId, 'prod', routing);
    const trigger = (await u.request('POST', `/v1/agents/${agentId}/triggers`, { alias: 'prod' })).body;
    const fired = await Promise.all([0, 1, 2].map(() => hook(trigger.triggerId, trigger.secret)));
    const triggered = await Promise.all(fired.map(async (res) => {
      expect(res.status, res.text).toBe(202);
      return (await u.request('GET', `/v1/agents/${agentId}/chats/${res.body.chatId}`)).body;
    }));
    for (const x of triggered) expect(x).toMatchObject({ configId: pickByKey(routing, trigger.triggerId), alias: 'prod' });

    const schedule = (await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron: '0 0 1 1 *', alias: 'prod' })).body;
    expect(await redis.zadd(DUE.index, 'XX', 'CH', Date.now(), schedule.scheduleId)).toBe(1);
    const scheduled = async () => (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats.filter((x: { title: string }) => x.title === 'Scheduled run');
    await expect.poll(async () => (await scheduled()).length, { timeout: 10_000, interval: 100 }).toBe(1);
    expect((await scheduled())[0]).toMatchObject({ configId: pickByKey(routing, schedule.scheduleId), alias: 'prod' });
    const stats = (await u.request('GET', `/v1/agents/${agentId}/aliases/prod/stats`)).body;
    expect(stats.configs.reduce((n: number, x: { chats: number }) => n + x.chats, 0)).toBe(4);
  });

  it('rollout — export carries routing and import brings it back', async () => {
    const u = await stack.user();
    const { agentId, configs } = await agentWithConfigs(u);
    const routing = [{ configId: configs[0]!, weight: 25 }, { configId: configs[2]!, weight: 75 }];
    await u.request('PUT', `/v1/agents/${agentId}/aliases/prod`, { routing, description: 'canary' });
    await u.request('PUT', `/v1/agents/${agentId}/aliases/stable`, { configId: configs[1] });
    const res = await fetch(`${stack.url}/v1/agents/${agentId}/export`, { headers: { authorization: `Bearer ${u.token}` } });
    const zip = Buffer.from(await res.arrayBuffer());
    const document = JSON.parse((await unzip(zip)).find((e) => e.name === 'agent.json')!.content.toString('utf8'));
    expect(document.aliases).toEqual([
      { alias: 'prod', configId: configs[2], description: 'canary', routing },
      { alias: 'stable', configId: configs[1], description: '', routing: null },
    ]);
    const form = new FormData();
    form.append('file', new Blob([zip], { type: 'application/zip' }), 'agent.zip');
    const imported = await request(`${stack.url}/v1/agents/import`, { method: 'POST', headers: { authorization: `Bearer ${u.token}` }, body: form });
    expect(imported.status, imported.text).toBe(201);
    const newId = imported.body.agentId as string;
    const versions = (await u.request('GET', `/v1/agents/${newId}/versions`)).body.versions.map((v: { configId: string }) => v.configId).reverse();
    const prod = (await u.request('GET', `/v1/agents/${newId}/aliases/prod`)).body;
    expect(prod).toMatchObject({ configId: versions[2], description: 'canary', routing: [{ configId: versions[0], weight: 25 }, { configId: versions[2], weight: 75 }] });
    expect((await u.request('GET', `/v1/agents/${newId}/aliases/stable`)).body.routing).toBeNull();
    expect((await u.request('GET', `/v1/agents/${newId}/aliases/prod/history`)).body.history[0].routing).toEqual(prod.routing);
    // The imported routing pins, routes and counts like any.
    const made = await chat(u, newId, { alias: 'prod', routingKey: 'r' });
    expect(made.configId).toBe(pickByKey(prod.routing, 'r'));
    expect((await u.request('GET', `/v1/agents/${newId}/aliases/prod/stats`)).body.configs.reduce((n: number, x: { chats: number }) => n + x.chats, 0)).toBe(1);
  });

  it("rollout — another user's Agent answers 404 on put, get, stats and chats through its alias", async () => {
    const owner = await stack.user();
    const { agentId, configs } = await agentWithConfigs(owner, 2);
    const routing = [{ configId: configs[0]!, weight: 50 }, { configId: configs[1]!, weight: 50 }];
    await putRouting(owner, agentId, 'prod', routing);
    const stranger = await stack.user();
    expectError(await putRouting(stranger, agentId, 'prod', routing), 404, 'AGENT_NOT_FOUND');
    expectError(await stranger.request('GET', `/v1/agents/${agentId}/aliases/prod`), 404, 'AGENT_NOT_FOUND');
    expectError(await stranger.request('GET', `/v1/agents/${agentId}/aliases/prod/stats`), 404, 'AGENT_NOT_FOUND');
    expectError(await stranger.request('POST', `/v1/agents/${agentId}/chats`, { alias: 'prod', routingKey: 'k' }), 404, 'AGENT_NOT_FOUND');
    // The stranger's own Agent cannot route to the owner's configs.
    const mine = await agentWithConfigs(stranger, 1);
    expectError(await putRouting(stranger, mine.agentId, 'prod', [{ configId: mine.configs[0]!, weight: 50 }, { configId: configs[0]!, weight: 50 }]), 404, 'CONFIG_NOT_FOUND');
    expect((await owner.request('GET', `/v1/agents/${agentId}/aliases/prod/stats`)).body.configs.map((x: { chats: number }) => x.chats)).toEqual([0, 0]);
  });
});
