import { beforeAll, describe, expect, it } from 'vitest';
import { sharedStack, type SharedStack } from './support/stack.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('projects', () => {
  it('projects — a new user has Home, and nothing else', async () => {
    const u = await stack.user();
    const res = await u.request('GET', '/v1/agent/projects');
    expect(res.status).toBe(200);
    expect(res.body.projects).toHaveLength(1);
    expect(res.body.projects[0]).toMatchObject({ name: 'Home', goal: '', archived: false, threads: [] });
    expect(res.body.projects[0].createdAt).toMatch(ISO_MS);
    expect(res.body.projects[0]).not.toHaveProperty('instructions');
  });

  it('projects — create returns 201 with every field and defaults', async () => {
    const u = await stack.user();
    const res = await u.request('POST', '/v1/agent/projects', { name: 'Research' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      name: 'Research',
      goal: '',
      instructions: '',
      archived: false,
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: res.body.createdAt,
      threads: [],
    });
  });

  it('projects — names are unique case-insensitively (NFKC + lower case), stored spelling returned', async () => {
    const u = await stack.user();
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Straße Plan', goal: 'g' })).status).toBe(201);
    const dup = await u.request('POST', '/v1/agent/projects', { name: 'STRAßE PLAN' });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('PROJECT_EXISTS');
    const fullWidth = await u.request('POST', '/v1/agent/projects', { name: 'ｈｏｍｅ' });
    expect(fullWidth.status).toBe(409);
    const list = await u.request('GET', '/v1/agent/projects');
    expect(list.body.projects.map((p: { name: string }) => p.name)).toEqual(['Home', 'Straße Plan']);
  });

  it('projects — 20 concurrent creates of one name give exactly one 201', async () => {
    const u = await stack.user();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => u.request('POST', '/v1/agent/projects', { name: i % 2 ? 'Race' : 'RACE' })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });

  it('projects — name rules are enforced with details.field', async () => {
    const u = await stack.user();
    for (const name of ['', ' lead', 'trail ', 'a/b', 'a\\b', 'tab\there', '.', '..', 'x'.repeat(101), 'nul\u0000']) {
      const res = await u.request('POST', '/v1/agent/projects', { name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'name' } });
    }
    expect((await u.request('POST', '/v1/agent/projects', { name: 'x'.repeat(100) })).status).toBe(201);
    expect((await u.request('POST', '/v1/agent/projects', { name: '研究 🚀' })).status).toBe(201);
  });

  it('projects — goal and instructions limits', async () => {
    const u = await stack.user();
    const goal = await u.request('POST', '/v1/agent/projects', { name: 'L', goal: 'g'.repeat(4001) });
    expect(goal.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'goal' } });
    const ins = await u.request('POST', '/v1/agent/projects', { name: 'L', instructions: 'i'.repeat(64_001) });
    expect(ins.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'instructions' } });
    expect((await u.request('POST', '/v1/agent/projects', { name: 'L', goal: 'g'.repeat(4000), instructions: 'i'.repeat(64_000) })).status).toBe(201);
  });

  it('projects — patch changes fields, moves updatedAt only on change, lookup is case-insensitive', async () => {
    const u = await stack.user();
    const created = (await u.request('POST', '/v1/agent/projects', { name: 'Alpha', goal: 'one', instructions: 'do it' })).body;
    const same = await u.request('PATCH', '/v1/agent/projects', { name: 'ALPHA', goal: 'one' });
    expect(same.status).toBe(200);
    expect(same.body.updatedAt).toBe(created.updatedAt);
    await new Promise((r) => setTimeout(r, 5));
    const changed = await u.request('PATCH', '/v1/agent/projects', { name: 'alpha', goal: 'two' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: 'Alpha', goal: 'two', instructions: 'do it', archived: false, threads: [] });
    expect(changed.body.updatedAt > created.updatedAt).toBe(true);
    expect(changed.body.createdAt).toBe(created.createdAt);
  });

  it('projects — patch refuses renames, unknown projects and archiving Home', async () => {
    const u = await stack.user();
    const rename = await u.request('PATCH', '/v1/agent/projects', { name: 'Home', newName: 'x' });
    expect(rename.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'newName' } });
    const missing = await u.request('PATCH', '/v1/agent/projects', { name: 'Nope', goal: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('PROJECT_NOT_FOUND');
    const home = await u.request('PATCH', '/v1/agent/projects', { name: 'home', archived: true });
    expect(home.status).toBe(400);
    expect(home.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'archived' } });
    const noName = await u.request('PATCH', '/v1/agent/projects', { goal: 'x' });
    expect(noName.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'name' } });
  });

  it('projects — archived projects are hidden unless includeArchived=true', async () => {
    const u = await stack.user();
    await u.request('POST', '/v1/agent/projects', { name: 'old' });
    await u.request('POST', '/v1/agent/projects', { name: 'Beta' });
    const archived = await u.request('PATCH', '/v1/agent/projects', { name: 'OLD', archived: true });
    expect(archived.body.archived).toBe(true);
    const names = async (q: string) => (await u.request('GET', `/v1/agent/projects${q}`)).body.projects.map((p: { name: string }) => p.name);
    expect(await names('')).toEqual(['Beta', 'Home']);
    expect(await names('?includeArchived=false')).toEqual(['Beta', 'Home']);
    expect(await names('?includeArchived=true')).toEqual(['Beta', 'Home', 'old']);
    const bad = await u.request('GET', '/v1/agent/projects?includeArchived=yes');
    expect(bad.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'includeArchived' } });
    const unknown = await u.request('GET', '/v1/agent/projects?archived=true');
    expect(unknown.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'archived' } });
  });

  it('projects — one user never sees another user\'s projects', async () => {
    const a = await stack.user();
    const b = await stack.user();
    await a.request('POST', '/v1/agent/projects', { name: 'Secret' });
    expect((await b.request('GET', '/v1/agent/projects?includeArchived=true')).body.projects.map((p: { name: string }) => p.name)).toEqual(['Home']);
    expect((await b.request('PATCH', '/v1/agent/projects', { name: 'Secret', goal: 'x' })).status).toBe(404);
    expect((await b.request('POST', '/v1/agent/projects', { name: 'Secret' })).status).toBe(201);
  });
});
