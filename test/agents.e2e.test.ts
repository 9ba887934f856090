import { beforeAll, describe, expect, it } from 'vitest';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const AGT = /^agt_[0-9a-f]{32}$/;
const CFG = /^cfg_[0-9a-f]{32}$/;

async function createAgent(u: ApiUser, body: Record<string, unknown> = { name: 'Helper' }) {
  const res = await u.request('POST', '/v1/agents', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

function expectError(res: { status: number; body: { error: Record<string, unknown> } }, status: number, code: string, details?: Record<string, string>) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (details) expect(res.body.error.details).toEqual(details);
}

describe('agents — create and read', () => {
  it('agents — create returns 201 with every field, the defaults, an ETag and a Location', async () => {
    const u = await stack.user();
    const res = await u.request('POST', '/v1/agents', { name: '  My   Research Helper ' });
    expect(res.status).toBe(201);
    const a = res.body;
    expect(a).toEqual({
      agentId: expect.stringMatching(AGT),
      currentConfigId: expect.stringMatching(CFG),
      state: 'active',
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: a.createdAt,
      lastChatAt: null,
      chatCount: 0,
      config: {
        schemaVersion: 1,
        configId: a.currentConfigId,
        agentId: a.agentId,
        name: 'My   Research Helper',
        normalizedName: 'my research helper',
        description: '',
        goal: '',
        instructions: '',
        conversationStarters: [],
        responseMode: 'high',
        threadManagementEnabled: true,
        threadCreationMode: 'explicit',
        projectName: 'Home',
        knowledgeFiles: [],
        skills: null,
        connectors: null,
        createdAt: a.createdAt,
        contentDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
        changeNote: '',
        parentConfigId: null,
      },
    });
    expect(res.headers.get('etag')).toBe(`"${a.currentConfigId}"`);
    expect(res.headers.get('location')).toBe(`/v1/agents/${a.agentId}`);
    const got = await u.request('GET', `/v1/agents/${a.agentId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a);
    expect(got.headers.get('etag')).toBe(`"${a.currentConfigId}"`);
  });

  it('agents — every editable field is stored as given; equal content gives an equal digest', async () => {
    const u = await stack.user();
    await u.request('POST', '/v1/agent/projects', { name: 'Research' });
    const body = {
      name: 'Full',
      description: 'd',
      goal: 'g',
      instructions: 'i',
      conversationStarters: ['one', 'two'],
      responseMode: 'low',
      projectName: 'RESEARCH',
      threadManagementEnabled: false,
      threadCreationMode: 'automatic',
      knowledgeFiles: [],
      skills: ['search', 'summarize'],
      connectors: [{ type: 'github', repo: 'a/b', nested: { z: 1, a: [true, null] } }],
    };
    const a = await createAgent(u, body);
    expect(a.config).toMatchObject({ ...body, projectName: 'Research' });
    const reordered = await createAgent(u, { ...body, projectName: 'research', connectors: [{ nested: { a: [true, null], z: 1 }, repo: 'a/b', type: 'github' }] });
    expect(reordered.config.contentDigest).toBe(a.config.contentDigest);
    expect(reordered.config.configId).not.toBe(a.config.configId);
  });

  it('agents — validation names the field, nested ones too; unknown fields are refused', async () => {
    const u = await stack.user();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'A', description: 'd'.repeat(1_001) }, 'description'],
      [{ name: 'A', goal: 'g'.repeat(4_001) }, 'goal'],
      [{ name: 'A', instructions: 'i'.repeat(64_001) }, 'instructions'],
      [{ name: 'A', conversationStarters: ['a', 'b', 'c', ''] }, 'conversationStarters[3]'],
      [{ name: 'A', conversationStarters: Array(11).fill('s') }, 'conversationStarters'],
      [{ name: 'A', conversationStarters: ['x'.repeat(501)] }, 'conversationStarters[0]'],
      [{ name: 'A', responseMode: 'max' }, 'responseMode'],
      [{ name: 'A', threadCreationMode: 'manual' }, 'threadCreationMode'],
      [{ name: 'A', threadManagementEnabled: 'yes' }, 'threadManagementEnabled'],
      [{ name: 'A', skills: Array(51).fill('s') }, 'skills'],
      [{ name: 'A', skills: ['ok', ''] }, 'skills[1]'],
      [{ name: 'A', connectors: [{ url: 'x' }] }, 'connectors[0].type'],
      [{ name: 'A', connectors: Array(21).fill({ type: 't' }) }, 'connectors'],
      [{ name: 'A', connectors: [{ type: 't', blob: 'x'.repeat(8 * 1024) }] }, 'connectors[0]'],
      [{ name: 'A', knowledgeFiles: Array(21).fill({ path: '/files/a' }) }, 'knowledgeFiles'],
      [{ name: 'A', knowledgeFiles: [{ path: '/files/a', size: 1 }] }, 'knowledgeFiles[0].size'],
      [{ name: 'A', description: null }, 'description'],
      [{ name: 'A', colour: 'blue' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await u.request('POST', '/v1/agents', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    expect((await u.request('POST', '/v1/agents', 'name=x', { 'content-type': 'text/plain' })).status).toBe(415);
    const limits = { name: '🚀'.repeat(100), description: 'd'.repeat(1_000), goal: 'g'.repeat(4_000), instructions: 'i'.repeat(64_000), conversationStarters: Array(10).fill('s'.repeat(500)), skills: Array(50).fill('k'.repeat(100)) };
    expect((await u.request('POST', '/v1/agents', limits)).status).toBe(201);
  });

  it('agents — projectName must name an existing, unarchived project of the user', async () => {
    const u = await stack.user();
    expectError(await u.request('POST', '/v1/agents', { name: 'A', projectName: 'Nope' }), 404, 'PROJECT_NOT_FOUND');
    await u.request('POST', '/v1/agent/projects', { name: 'Old' });
    await u.request('PATCH', '/v1/agent/projects', { name: 'Old', archived: true });
    expectError(await u.request('POST', '/v1/agents', { name: 'A', projectName: 'old' }), 409, 'PROJECT_ARCHIVED');
    const a = await createAgent(u, { name: 'A', projectName: 'home' });
    expect(a.config.projectName).toBe('Home');
    const patch = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, projectName: 'OLD' });
    expectError(patch, 409, 'PROJECT_ARCHIVED');
  });

  it('agents — unknown, malformed and other users\' ids are 404 AGENT_NOT_FOUND', async () => {
    const [alice, bob] = [await stack.user(), await stack.user()];
    const a = await createAgent(alice);
    for (const id of ['agt_00000000000000000000000000000000', 'nope', a.agentId]) {
      expectError(await bob.request('GET', `/v1/agents/${id}`), 404, 'AGENT_NOT_FOUND');
    }
  });
});

describe('agents — update (PATCH)', () => {
  it('agents — baseConfigId is required', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    expectError(await u.request('PATCH', `/v1/agents/${a.agentId}`, { goal: 'x' }), 400, 'INVALID_ARGUMENT', { field: 'baseConfigId' });
  });

  it('agents — (1) unchanged fields return the current config whatever baseConfigId says; no new version', async () => {
    const u = await stack.user();
    const a = await createAgent(u, { name: 'Same', goal: 'g' });
    const res = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: 'cfg_whatever', name: ' Same ', goal: 'g', projectName: 'HOME' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(a);
    expect(res.headers.get('etag')).toBe(`"${a.currentConfigId}"`);
    expect((await u.request('GET', `/v1/agents/${a.agentId}/versions`)).body.versions).toHaveLength(1);
  });

  it('agents — (2) a stale base is 409 with details.currentConfigId; (3) a fresh one writes a new config', async () => {
    const u = await stack.user();
    const a = await createAgent(u, { name: 'Editable', goal: 'one' });
    await new Promise((r) => setTimeout(r, 5));
    const next = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, goal: 'two' });
    expect(next.status).toBe(200);
    expect(next.body.currentConfigId).toMatch(CFG);
    expect(next.body.currentConfigId).not.toBe(a.currentConfigId);
    expect(next.body.config).toMatchObject({ configId: next.body.currentConfigId, goal: 'two', name: 'Editable' });
    expect(next.body.updatedAt > a.updatedAt).toBe(true);
    expect(next.body.createdAt).toBe(a.createdAt);
    expect(next.headers.get('etag')).toBe(`"${next.body.currentConfigId}"`);
    const stale = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, goal: 'three' });
    expectError(stale, 409, 'STALE_AGENT_CONFIG', { currentConfigId: next.body.currentConfigId });
    const versions = (await u.request('GET', `/v1/agents/${a.agentId}/versions`)).body.versions;
    expect(versions.map((v: { configId: string }) => v.configId)).toEqual([next.body.currentConfigId, a.currentConfigId]);
    expect(versions[1]).toEqual(a.config);
  });

  it('agents — If-Match works instead of baseConfigId; a mismatch is 412 with the 409 body', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const etag = `"${a.currentConfigId}"`;
    const ok = await u.request('PATCH', `/v1/agents/${a.agentId}`, { goal: 'via if-match' }, { 'if-match': etag });
    expect(ok.status).toBe(200);
    const stale = await u.request('PATCH', `/v1/agents/${a.agentId}`, { goal: 'again' }, { 'if-match': etag });
    expectError(stale, 412, 'STALE_AGENT_CONFIG', { currentConfigId: ok.body.currentConfigId });
    const disagree = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: ok.body.currentConfigId, goal: 'x' }, { 'if-match': etag });
    expectError(disagree, 400, 'INVALID_ARGUMENT', { field: 'If-Match' });
    expectError(await u.request('PATCH', `/v1/agents/${a.agentId}`, { goal: 'x' }, { 'if-match': '*' }), 400, 'INVALID_ARGUMENT', { field: 'If-Match' });
    const both = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: ok.body.currentConfigId, goal: 'both' }, { 'if-match': ok.headers.get('etag')! });
    expect(both.status).toBe(200);
  });

  it('agents — 30 concurrent PATCHes on one base: exactly one 200 with a new config, 29 × 409', async () => {
    const u = await stack.user();
    const a = await createAgent(u);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, goal: `racer ${i}` })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    const winner = ok[0]!.body.currentConfigId;
    expect(winner).not.toBe(a.currentConfigId);
    const conflicts = results.filter((r) => r.status === 409);
    expect(conflicts).toHaveLength(29);
    for (const c of conflicts) expect(c.body.error).toMatchObject({ code: 'STALE_AGENT_CONFIG', details: { currentConfigId: winner } });
    expect((await u.request('GET', `/v1/agents/${a.agentId}/versions`)).body.versions).toHaveLength(2);
  });

  it('agents — restoring earlier fields gives a new config with the earlier digest', async () => {
    const u = await stack.user();
    const a = await createAgent(u, { name: 'R', goal: 'first', conversationStarters: ['hi'] });
    const b = (await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, goal: 'second', conversationStarters: [] })).body;
    const { configId: _c, agentId: _a, createdAt: _t, contentDigest: _d, normalizedName: _n, schemaVersion: _s, parentConfigId: _p, ...fields } = a.config;
    const restored = await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: b.currentConfigId, ...fields });
    expect(restored.status).toBe(200);
    expect(restored.body.currentConfigId).not.toBe(a.currentConfigId);
    expect(restored.body.config.contentDigest).toBe(a.config.contentDigest);
    expect(b.config.contentDigest).not.toBe(a.config.contentDigest);
  });
});
