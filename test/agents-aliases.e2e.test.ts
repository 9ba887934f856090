import jsonPatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  // A small retention so that reclaiming is seen within a few updates.
  stack = await startStack({ env: { CONFIG_RETENTION: '3' } });
});
afterAll(async () => {
  await stack?.stop();
});

const EDITABLE = ['name', 'description', 'goal', 'instructions', 'conversationStarters', 'responseMode', 'projectName', 'threadManagementEnabled', 'threadCreationMode', 'knowledgeFiles', 'skills', 'connectors'];
const editableOf = (config: Record<string, unknown>) => structuredClone(Object.fromEntries(EDITABLE.map((k) => [k, config[k]])));

async function createAgent(u: ApiUser, body: Record<string, unknown> = { name: 'Helper' }) {
  const res = await u.request('POST', '/v1/agents', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function patch(u: ApiUser, agentId: string, base: string, body: Record<string, unknown>) {
  const res = await u.request('PATCH', `/v1/agents/${agentId}`, { baseConfigId: base, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

function expectError(res: { status: number; body: { error: Record<string, unknown> } }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
}

describe('agents — change notes, lineage and one version', () => {
  it('agents — configs carry changeNote and parentConfigId outside the digest; a no-op PATCH creates nothing whatever its note', async () => {
    const u = await stack.user();
    const a = await createAgent(u, { name: 'Notes', changeNote: 'first cut' });
    expect(a.config).toMatchObject({ changeNote: 'first cut', parentConfigId: null });
    const b = await patch(u, a.agentId, a.currentConfigId, { goal: 'g', changeNote: 'add a goal' });
    expect(b.config).toMatchObject({ changeNote: 'add a goal', parentConfigId: a.currentConfigId });
    const back = await patch(u, a.agentId, b.currentConfigId, { goal: '' });
    expect(back.config.contentDigest).toBe(a.config.contentDigest);
    expect(back.config.changeNote).toBe('');
    const same = await patch(u, a.agentId, back.currentConfigId, { goal: '', changeNote: 'nothing really' });
    expect(same.currentConfigId).toBe(back.currentConfigId);
    expect(same.config.changeNote).toBe('');
    expect((await u.request('GET', `/v1/agents/${a.agentId}/versions`)).body.versions).toHaveLength(3);
  });

  it('agents — changeNote over 1,000 characters or of the wrong type → 400 details.field', async () => {
    const u = await stack.user();
    const long = await u.request('POST', '/v1/agents', { name: 'x', changeNote: 'n'.repeat(1001) });
    expectError(long, 400, 'INVALID_ARGUMENT');
    expect(long.body.error.details.field).toBe('changeNote');
    const a = await createAgent(u, { name: 'x', changeNote: 'n'.repeat(1000) });
    const wrong = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, changeNote: 5 });
    expectError(wrong, 400, 'INVALID_ARGUMENT');
    expect(wrong.body.error.details.field).toBe('changeNote');
  });

  it('agents — GET versions/{configId} returns any kept config; others → 404 CONFIG_NOT_FOUND', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const b = await patch(u, a.agentId, a.currentConfigId, { goal: 'two' });
    const one = await u.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(a.config);
    const other = await createAgent(u);
    expectError(await u.request('GET', `/v1/agents/${other.agentId}/versions/${b.currentConfigId}`), 404, 'CONFIG_NOT_FOUND');
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/versions/cfg_${'0'.repeat(32)}`), 404, 'CONFIG_NOT_FOUND');
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/versions/nonsense`), 404, 'CONFIG_NOT_FOUND');
    const stranger = await stack.user();
    expectError(await stranger.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}`), 404, 'AGENT_NOT_FOUND');
  });
});

describe('agents — diffs', () => {
  it('agents — the diff is an RFC 6902 patch that turns from into to, from defaulting to the parent', async () => {
    const u = await stack.user();
    const a = await createAgent(u, { name: 'Diff', conversationStarters: ['a', 'b', 'c'], connectors: [{ type: 'web', depth: { x: 1 } }] });
    const b = await patch(u, a.agentId, a.currentConfigId, { name: 'Diff 2', conversationStarters: ['c'], skills: ['s1'], connectors: [{ type: 'web', depth: { y: 2 } }], responseMode: 'low' });
    const res = await u.request('GET', `/v1/agents/${a.agentId}/versions/${b.currentConfigId}/diff`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.from).toBe(a.currentConfigId);
    expect(res.body.to).toBe(b.currentConfigId);
    expect(res.body.operations.length).toBeGreaterThan(0);
    const applied = jsonPatch.applyPatch(editableOf(a.config), res.body.operations, true, true).newDocument;
    expect(applied).toEqual(editableOf(b.config));
    // Backwards, with an explicit from.
    const back = await u.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}/diff?from=${b.currentConfigId}`);
    expect(back.status).toBe(200);
    expect(jsonPatch.applyPatch(editableOf(b.config), back.body.operations, true, true).newDocument).toEqual(editableOf(a.config));
    const none = await u.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}/diff?from=${a.currentConfigId}`);
    expect(none.body.operations).toEqual([]);
  });

  it('agents — a first config without from → 400 from; unknown configs → 404; unknown query → 400', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const first = await u.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}/diff`);
    expectError(first, 400, 'INVALID_ARGUMENT');
    expect(first.body.error.details.field).toBe('from');
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}/diff?from=cfg_${'1'.repeat(32)}`), 404, 'CONFIG_NOT_FOUND');
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/versions/${a.currentConfigId}/diff?frm=x`), 400, 'INVALID_ARGUMENT');
  });
});

describe('agents — aliases', () => {
  it('agents — PUT creates (201) then moves (200) with ETag; GET, list by name, history newest first, DELETE', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const b = await patch(u, a.agentId, a.currentConfigId, { goal: 'v2' });
    const created = await u.request('PUT', `/v1/agents/${a.agentId}/aliases/production`, { configId: a.currentConfigId, description: 'live' });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('etag')).toBe(`"${a.currentConfigId}"`);
    expect(created.body).toEqual({ alias: 'production', agentId: a.agentId, configId: a.currentConfigId, routing: null, description: 'live', createdAt: expect.any(String), updatedAt: created.body.createdAt });
    await u.request('PUT', `/v1/agents/${a.agentId}/aliases/beta`, { configId: b.currentConfigId });
    const moved = await u.request('PUT', `/v1/agents/${a.agentId}/aliases/production`, { configId: b.currentConfigId, description: 'live' }, { 'if-match': `"${a.currentConfigId}"` });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.configId).toBe(b.currentConfigId);
    expect(moved.body.createdAt).toBe(created.body.createdAt);
    const one = await u.request('GET', `/v1/agents/${a.agentId}/aliases/production`);
    expect(one.status).toBe(200);
    expect(one.headers.get('etag')).toBe(`"${b.currentConfigId}"`);
    expect(one.body.config).toEqual(b.config);
    const list = await u.request('GET', `/v1/agents/${a.agentId}/aliases`);
    expect(list.body.aliases.map((x: { alias: string }) => x.alias)).toEqual(['beta', 'production']);
    const history = await u.request('GET', `/v1/agents/${a.agentId}/aliases/production/history`);
    expect(history.body.history).toEqual([
      { configId: b.currentConfigId, routing: null, from: moved.body.updatedAt, until: null },
      { configId: a.currentConfigId, routing: null, from: created.body.createdAt, until: moved.body.updatedAt },
    ]);
    expect((await u.request('DELETE', `/v1/agents/${a.agentId}/aliases/production`)).status).toBe(204);
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/aliases/production`), 404, 'ALIAS_NOT_FOUND');
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/aliases/production/history`), 404, 'ALIAS_NOT_FOUND');
    expectError(await u.request('DELETE', `/v1/agents/${a.agentId}/aliases/production`), 404, 'ALIAS_NOT_FOUND');
  });

  it('agents — bad names, bodies and configs are refused; If-Match elsewhere → 412 with currentConfigId', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const other = await createAgent(u);
    for (const name of ['Prod', '-x', '_x', 'a'.repeat(65), 'a.b', '%C3%A9']) {
      const res = await u.request('PUT', `/v1/agents/${a.agentId}/aliases/${name}`, { configId: a.currentConfigId });
      expectError(res, 400, 'INVALID_ARGUMENT');
      expect(res.body.error.details.field).toBe('alias');
    }
    expect((await u.request('PUT', `/v1/agents/${a.agentId}/aliases/${'a'.repeat(64)}`, { configId: a.currentConfigId })).status).toBe(201);
    expectError(await u.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, {}), 400, 'INVALID_ARGUMENT');
    expectError(await u.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, { configId: a.currentConfigId, extra: 1 }), 400, 'INVALID_ARGUMENT');
    expectError(await u.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, { configId: other.currentConfigId }), 404, 'CONFIG_NOT_FOUND');
    expectError(await u.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, { configId: 'nope' }), 404, 'CONFIG_NOT_FOUND');
    await u.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, { configId: a.currentConfigId });
    const stale = await u.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, { configId: a.currentConfigId }, { 'if-match': `"cfg_${'2'.repeat(32)}"` });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.body.error.details.currentConfigId).toBe(a.currentConfigId);
    expectError(await u.request('PUT', `/v1/agents/${a.agentId}/aliases/never`, { configId: a.currentConfigId }, { 'if-match': `"${a.currentConfigId}"` }), 412, 'PRECONDITION_FAILED');
    const stranger = await stack.user();
    expectError(await stranger.request('PUT', `/v1/agents/${a.agentId}/aliases/x`, { configId: a.currentConfigId }), 404, 'AGENT_NOT_FOUND');
    expectError(await stranger.request('GET', `/v1/agents/${a.agentId}/aliases`), 404, 'AGENT_NOT_FOUND');
  });

  it('agents — 20 concurrent moves with the same If-Match: exactly one 200, the rest 412', async () => {
    const u = await stack.user();
    let agent = await createAgent(u);
    const first = agent.currentConfigId;
    const targets: string[] = [];
    for (let i = 0; i < 2; i++) {
      agent = await patch(u, agent.agentId, agent.currentConfigId, { goal: `g${i}` });
      targets.push(agent.currentConfigId);
    }
    await u.request('PUT', `/v1/agents/${agent.agentId}/aliases/prod`, { configId: first });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => u.request('PUT', `/v1/agents/${agent.agentId}/aliases/prod`, { configId: targets[i % 2] }, { 'if-match': `"${first}"` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(19);
    const winner = results.find((r) => r.status === 200)!.body.configId;
    expect((await u.request('GET', `/v1/agents/${agent.agentId}/aliases/prod`)).body.configId).toBe(winner);
    expect((await u.request('GET', `/v1/agents/${agent.agentId}/aliases/prod/history`)).body.history).toHaveLength(2);
  });

  it('agents — at most 20 aliases per Agent, also under concurrency (403 QUOTA_EXCEEDED)', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    for (let i = 0; i < 15; i++) expect((await u.request('PUT', `/v1/agents/${a.agentId}/aliases/a${i}`, { configId: a.currentConfigId })).status).toBe(201);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => u.request('PUT', `/v1/agents/${a.agentId}/aliases/b${i}`, { configId: a.currentConfigId })));
    expect(burst.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = burst.filter((r) => r.status === 403);
    expect(refused).toHaveLength(5);
    expect(refused[0]!.body.error.details).toEqual({ quota: 'MAX_ALIASES_PER_AGENT', limit: 20, used: 20 });
    // Moving an existing one is still allowed at the cap.
    expect((await u.request('PUT', `/v1/agents/${a.agentId}/aliases/a0`, { configId: a.currentConfigId, description: 'd' })).status).toBe(200);
    expect((await u.request('GET', `/v1/agents/${a.agentId}/aliases`)).body.aliases).toHaveLength(20);
  });

  it('agents — retention never reclaims an aliased config; once the alias moves away it may go', async () => {
    const u = await stack.user();
    let agent = await createAgent(u);
    const kept = agent.currentConfigId;
    await u.request('PUT', `/v1/agents/${agent.agentId}/aliases/stable`, { configId: kept });
    for (let i = 0; i < 5; i++) agent = await patch(u, agent.agentId, agent.currentConfigId, { goal: `g${i}` });
    const one = await u.request('GET', `/v1/agents/${agent.agentId}/versions/${kept}`);
    expect(one.status).toBe(200);
    expect((await u.request('GET', `/v1/agents/${agent.agentId}/aliases/stable`)).body.config.configId).toBe(kept);
    await u.request('PUT', `/v1/agents/${agent.agentId}/aliases/stable`, { configId: agent.currentConfigId });
    agent = await patch(u, agent.agentId, agent.currentConfigId, { goal: 'last' });
    expectError(await u.request('GET', `/v1/agents/${agent.agentId}/versions/${kept}`), 404, 'CONFIG_NOT_FOUND');
  });

  it('agents — chats take alias: pinned to the aliased config; unknown alias → 404; responses carry alias', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const b = await patch(u, a.agentId, a.currentConfigId, { goal: 'newer' });
    await u.request('PUT', `/v1/agents/${a.agentId}/aliases/prod`, { configId: a.currentConfigId });
    const chat = await u.request('POST', `/v1/agents/${a.agentId}/chats`, { alias: 'prod' });
    expect(chat.status, chat.text).toBe(201);
    expect(chat.body).toMatchObject({ configId: a.currentConfigId, alias: 'prod' });
    const plain = await u.request('POST', `/v1/agents/${a.agentId}/chats`, {});
    expect(plain.body).toMatchObject({ configId: b.currentConfigId, alias: null });
    await u.request('PUT', `/v1/agents/${a.agentId}/aliases/prod`, { configId: b.currentConfigId });
    const got = await u.request('GET', `/v1/agents/${a.agentId}/chats/${chat.body.chatId}`);
    expect(got.body).toMatchObject({ configId: a.currentConfigId, alias: 'prod' });
    expect(got.body.config.configId).toBe(a.currentConfigId);
    expectError(await u.request('POST', `/v1/agents/${a.agentId}/chats`, { alias: 'nope' }), 404, 'ALIAS_NOT_FOUND');
    expectError(await u.request('POST', `/v1/agents/${a.agentId}/chats`, { alias: 'Bad Name' }), 404, 'ALIAS_NOT_FOUND');
    expectError(await u.request('POST', `/v1/agents/${a.agentId}/chats`, { alias: 7 }), 400, 'INVALID_ARGUMENT');
  });

  it('agents — deleting the Agent removes its aliases', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    await u.request('PUT', `/v1/agents/${a.agentId}/aliases/prod`, { configId: a.currentConfigId });
    expect((await u.request('DELETE', `/v1/agents/${a.agentId}`)).status).toBe(204);
    expectError(await u.request('GET', `/v1/agents/${a.agentId}/aliases`), 404, 'AGENT_NOT_FOUND');
    expectError(await u.request('PUT', `/v1/agents/${a.agentId}/aliases/prod`, { configId: a.currentConfigId }), 404, 'AGENT_NOT_FOUND');
  });
});
