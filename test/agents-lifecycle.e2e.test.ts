import { type NatsConnection } from '@nats-io/transport-node';
import { readEvents } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';
import { testNats } from './support/backends.js';

// Versions and retention, the list, chats, delete and isolation (docs/api/agents.md,
// docs/api/automations.md#chats).
let stack: SharedStack;
let nats: NatsConnection | undefined;
beforeAll(async () => {
  stack = sharedStack();
});
afterAll(async () => {
  await nats?.close();
});

async function createAgent(u: ApiUser, body: Record<string, unknown> = { name: 'Helper' }) {
  const res = await u.request('POST', '/v1/agents', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const patch = async (u: ApiUser, agentId: string, base: string, body: Record<string, unknown>) => {
  const res = await u.request('PATCH', `/v1/agents/${agentId}`, { baseConfigId: base, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body;
};

const LIST_ITEM_KEYS = ['activeScheduleCount', 'agentId', 'chatCount', 'createdAt', 'currentConfigId', 'description', 'lastChatAt', 'name', 'nextRunAt', 'projectName', 'responseMode', 'updatedAt'];

describe('agents — versions and retention', () => {
  it('agents — beyond 100 configs the oldest unpinned go; pinned ones survive and their chats still return them', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const pin0 = (await u.request('POST', `/v1/agents/${a.agentId}/chats`, {})).body;
    let current = a.currentConfigId;
    const made: string[] = [current];
    let pin50: { chatId: string; configId: string } | undefined;
    for (let i = 1; i <= 101; i++) {
      current = (await patch(u, a.agentId, current, { goal: `v${i}` })).currentConfigId;
      made.push(current);
      if (i === 50) pin50 = (await u.request('POST', `/v1/agents/${a.agentId}/chats`, { title: 'at 50' })).body;
    }
    const versions: { configId: string }[] = (await u.request('GET', `/v1/agents/${a.agentId}/versions`)).body.versions;
    expect(versions.length).toBeLessThanOrEqual(100);
    expect(versions[0]!.configId).toBe(current);
    const listed = versions.map((v) => v.configId);
    expect(listed).toEqual(made.filter((id) => listed.includes(id)).reverse()); // newest first
    expect(listed).not.toContain(made[1]);
    expect(listed).not.toContain(made[2]);
    expect(listed).toContain(made[50]);
    const chat0 = await u.request('GET', `/v1/agents/${a.agentId}/chats/${pin0.chatId}`);
    expect(chat0.body.config).toEqual(a.config);
    const chat50 = await u.request('GET', `/v1/agents/${a.agentId}/chats/${pin50!.chatId}`);
    expect(chat50.body.config.configId).toBe(made[50]);
  });
});

describe('agents — list', () => {
  it('agents — paging, order (createdAt desc, agentId desc), totals, and exactly the seed fields', async () => {
    const u = await stack.user();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await createAgent(u, { name: `Agent ${i}` })).agentId);
    const all = (await u.request('GET', '/v1/agents?limit=100')).body;
    expect(all.pagination).toEqual({ page: 1, limit: 100, total: 7, pages: 1 });
    const keyOf = (a: { createdAt: string; agentId: string }) => `${a.createdAt}|${a.agentId}`;
    expect(all.agents.map(keyOf)).toEqual(all.agents.map(keyOf).sort().reverse());
    expect(new Set(all.agents.map((a: { agentId: string }) => a.agentId))).toEqual(new Set(ids));
    for (const item of all.agents) expect(Object.keys(item).sort()).toEqual(LIST_ITEM_KEYS);
    expect(all.agents[0]).toMatchObject({ description: '', projectName: 'Home', responseMode: 'high', chatCount: 0, lastChatAt: null, activeScheduleCount: 0, nextRunAt: null });
    const p1 = (await u.request('GET', '/v1/agents?page=1&limit=3')).body;
    const p3 = (await u.request('GET', '/v1/agents?page=3&limit=3')).body;
    expect(p1.pagination).toEqual({ page: 1, limit: 3, total: 7, pages: 3 });
    expect(p3.agents.map((a: { agentId: string }) => a.agentId)).toEqual([all.agents[6].agentId]);
    expect((await u.request('GET', '/v1/agents?page=9')).body).toEqual({ agents: [], pagination: { page: 9, limit: 20, total: 7, pages: 1 } });
    expect((await u.request('GET', '/v1/agents')).body.pagination).toEqual({ page: 1, limit: 20, total: 7, pages: 1 });
  });

  it('agents — q matches name or description, normalized; no match gives pages 0', async () => {
    const u = await stack.user();
    await createAgent(u, { name: 'Tax  Helper' });
    await createAgent(u, { name: 'Other', description: 'does ＴＡＸ returns' });
    await createAgent(u, { name: 'Unrelated' });
    const names = async (q: string) => (await u.request('GET', `/v1/agents?q=${encodeURIComponent(q)}`)).body.agents.map((a: { name: string }) => a.name).sort();
    expect(await names('tax')).toEqual(['Other', 'Tax  Helper']);
    expect(await names('  TAX   helper ')).toEqual(['Tax  Helper']);
    const none = (await u.request('GET', '/v1/agents?q=zzz')).body;
    expect(none).toEqual({ agents: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
  });

  it('agents — bad page, limit, q and unknown parameters are 400 with details.field', async () => {
    const u = await stack.user();
    for (const [query, field] of [['page=0', 'page'], ['page=-1', 'page'], ['page=1.5', 'page'], ['page=x', 'page'], ['limit=0', 'limit'], ['limit=101', 'limit'], [`q=${'q'.repeat(201)}`, 'q'], ['sort=name', 'sort']]) {
      const res = await u.request('GET', `/v1/agents?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    expect((await u.request('GET', '/v1/agents?limit=100&page=1')).status).toBe(200);
  });
});

describe('agents — chats', () => {
  it('agents — a chat pins the current config and keeps it after updates', async () => {
    const u = await stack.user();
    const a = await createAgent(u, { name: 'Chatter', goal: 'old goal' });
    const res = await u.request('POST', `/v1/agents/${a.agentId}/chats`, {});
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      chatId: expect.stringMatching(/^cht_[0-9a-f]{32}$/),
      agentId: a.agentId,
      configId: a.currentConfigId,
      projectName: 'Home',
      title: 'New chat',
      createdAt: expect.any(String),
      updatedAt: res.body.createdAt,
      alias: null,
    });
    await patch(u, a.agentId, a.currentConfigId, { goal: 'new goal' });
    const got = await u.request('GET', `/v1/agents/${a.agentId}/chats/${res.body.chatId}`);
    expect(got.body).toEqual({ ...res.body, config: a.config });
    const agent = (await u.request('GET', `/v1/agents/${a.agentId}`)).body;
    expect(agent).toMatchObject({ chatCount: 1, lastChatAt: res.body.createdAt });
    expect((await u.request('POST', `/v1/agents/${a.agentId}/chats`, { title: '' })).body.error).toMatchObject({ details: { field: 'title' } });
  });

  it('agents — 10 concurrent chats: chatCount 10, listed newest first, lastChatAt the newest', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => u.request('POST', `/v1/agents/${a.agentId}/chats`, { title: `chat ${i}` })));
    expect(made.map((r) => r.status)).toEqual(Array(10).fill(201));
    const agent = (await u.request('GET', `/v1/agents/${a.agentId}`)).body;
    expect(agent.chatCount).toBe(10);
    const chats = (await u.request('GET', `/v1/agents/${a.agentId}/chats`)).body.chats;
    expect(chats).toHaveLength(10);
    const keys = chats.map((c: { createdAt: string; chatId: string }) => `${c.createdAt}|${c.chatId}`);
    expect(keys).toEqual([...keys].sort().reverse());
    expect(agent.lastChatAt).toBe(chats[0].createdAt);
    const item = (await u.request('GET', '/v1/agents')).body.agents[0];
    expect(item).toMatchObject({ chatCount: 10, lastChatAt: agent.lastChatAt });
  });

  it("agents — another Agent's chat and unknown chats are 404 CHAT_NOT_FOUND", async () => {
    const u = await stack.user();
    const [a, b] = [await createAgent(u), await createAgent(u)];
    const chat = (await u.request('POST', `/v1/agents/${a.agentId}/chats`, {})).body;
    for (const path of [`/v1/agents/${b.agentId}/chats/${chat.chatId}`, `/v1/agents/${a.agentId}/chats/cht_00000000000000000000000000000000`]) {
      const res = await u.request('GET', path);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('CHAT_NOT_FOUND');
    }
  });
});

describe('agents — delete and isolation', () => {
  it('agents — delete: 204, then 404 AGENT_NOT_FOUND on every route under the Agent, gone from the list, one agent.deleted event', async () => {
    const since = new Date(Date.now() - 1_000);
    const u = await stack.user();
    const a = await createAgent(u);
    const chat = (await u.request('POST', `/v1/agents/${a.agentId}/chats`, {})).body;
    const del = await u.request('DELETE', `/v1/agents/${a.agentId}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const base = `/v1/agents/${a.agentId}`;
    for (const [method, path, body] of [
      ['GET', base], ['PATCH', base, { baseConfigId: a.currentConfigId, goal: 'x' }], ['DELETE', base], ['GET', `${base}/versions`],
      ['GET', `${base}/chats`], ['POST', `${base}/chats`, {}], ['GET', `${base}/chats/${chat.chatId}`],
    ] as [string, string, unknown?][]) {
      const res = await u.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('AGENT_NOT_FOUND');
    }
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(0);
    nats ??= await testNats();
    let events: Awaited<ReturnType<typeof readEvents>> = [];
    for (let i = 0; i < 50 && events.length === 0; i++) {
      events = (await readEvents(nats, { subject: 'agents.deleted', since })).filter((e) => e.subject === a.agentId);
      if (events.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ specversion: '1.0', type: 'agent.deleted', data: { userId: u.sub, agentId: a.agentId } });
  });

  it("agents — users never see each other's Agents", async () => {
    const [alice, bob] = [await stack.user(), await stack.user()];
    const a = await createAgent(alice);
    const chat = (await alice.request('POST', `/v1/agents/${a.agentId}/chats`, {})).body;
    expect((await bob.request('GET', '/v1/agents')).body.pagination.total).toBe(0);
    const base = `/v1/agents/${a.agentId}`;
    for (const [method, path, body] of [
      ['GET', base], ['PATCH', base, { baseConfigId: a.currentConfigId, goal: 'x' }], ['DELETE', base], ['GET', `${base}/versions`],
      ['GET', `${base}/chats`], ['POST', `${base}/chats`, {}], ['GET', `${base}/chats/${chat.chatId}`],
    ] as [string, string, unknown?][]) {
      expect((await bob.request(method, path, body)).body.error.code, `${method} ${path}`).toBe('AGENT_NOT_FOUND');
    }
    expect((await alice.request('GET', base)).body).toMatchObject({ chatCount: 1, config: { goal: '' } });
  });
});
