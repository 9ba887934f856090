import { beforeAll, describe, expect, it } from 'vitest';
import { put, sha256 } from './support/files-api.js';
import { rawZip, type RawEntry } from '@workspace/testkit';
import { request, sharedStack, type ApiUser, type SharedStack } from './support/stack.js';
import { unzip } from './support/zip.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});

async function exportZip(u: ApiUser, agentId: string): Promise<{ res: Response; zip: Buffer }> {
  const res = await fetch(`${stack.url}/v1/agents/${agentId}/export`, { headers: { authorization: `Bearer ${u.token}` } });
  return { res, zip: Buffer.from(await res.arrayBuffer()) };
}

function importZip(u: ApiUser, zip: Buffer, options: { projectName?: string; headers?: Record<string, string> } = {}) {
  const form = new FormData();
  if (options.projectName !== undefined) form.append('projectName', options.projectName);
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'agent.zip');
  return request(`${stack.url}/v1/agents/import`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, ...options.headers }, body: form });
}

async function documentOf(zip: Buffer) {
  const entries = await unzip(zip);
  const json = entries.find((e) => e.name === 'agent.json');
  expect(json).toBeDefined();
  const knowledge = Object.fromEntries(entries.filter((e) => e.name.startsWith('knowledge/')).map((e) => [e.name, e.content.toString('base64')]));
  return { document: JSON.parse(json!.content.toString('utf8')), knowledge, names: entries.map((e) => e.name) };
}

/** What must survive a round trip, without ids: configs by position, aliases by the position of their config. */
function comparable(document: { configs: Record<string, unknown>[]; aliases: { alias: string; configId: string; description: string }[] }) {
  const position = new Map(document.configs.map((c, i) => [c.configId, i]));
  return {
    configs: document.configs.map((c) => ({
      contentDigest: c.contentDigest, changeNote: c.changeNote, createdAt: c.createdAt, name: c.name, knowledgeFiles: c.knowledgeFiles,
      parent: c.parentConfigId === null ? null : position.get(c.parentConfigId as string),
    })),
    aliases: document.aliases.map((a) => ({ alias: a.alias, config: position.get(a.configId), description: a.description })),
  };
}

async function agentWithHistory(u: ApiUser) {
  const one = await put(stack, u, '/files/kb/one.md', '# one\n');
  const two = await put(stack, u, '/files/kb/two.bin', Buffer.from([0, 1, 2, 255]));
  const a = (await u.request('POST', '/v1/agents', { name: 'Exporter ✓', changeNote: 'start', knowledgeFiles: [{ path: '/files/kb/one.md' }] })).body;
  const b = (await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: a.currentConfigId, goal: 'g', changeNote: 'a goal', knowledgeFiles: [{ path: '/files/kb/one.md' }, { path: '/files/kb/two.bin' }] })).body;
  const c = (await u.request('PATCH', `/v1/agents/${a.agentId}`, { baseConfigId: b.currentConfigId, skills: ['x'], connectors: [{ type: 'web', n: 1 }] })).body;
  expect((await u.request('PUT', `/v1/agents/${a.agentId}/aliases/production`, { configId: b.currentConfigId, description: 'live' })).status).toBe(201);
  expect((await u.request('PUT', `/v1/agents/${a.agentId}/aliases/staging`, { configId: c.currentConfigId })).status).toBe(201);
  return { agentId: a.agentId as string, configs: [a, b, c].map((x) => x.config), files: [one, two] };
}

describe('agents — export and import', () => {
  it('agents — export streams agent.json and knowledge/<sha256>; import makes a new Agent; export again gives the same history, aliases and bytes', async () => {
    const u = await stack.user();
    const { agentId, configs, files } = await agentWithHistory(u);
    const first = await exportZip(u, agentId);
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('content-type')).toBe('application/zip');
    expect(first.res.headers.get('content-disposition')).toBe(`attachment; filename="Exporter _.zip"; filename*=UTF-8''Exporter%20%E2%9C%93.zip`);
    const exported = await documentOf(first.zip);
    expect(exported.document.format).toBe('workspace.agent/v1');
    expect(exported.document.configs).toEqual(configs);
    expect(exported.document.aliases).toEqual([
      { alias: 'production', configId: configs[1].configId, description: 'live', routing: null },
      { alias: 'staging', configId: configs[2].configId, description: '', routing: null },
    ]);
    expect(Object.keys(exported.knowledge).sort()).toEqual(files.map((f) => `knowledge/${f.sha256}`).sort());
    expect(Buffer.from(exported.knowledge[`knowledge/${files[1]!.sha256}`]!, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));

    const imported = await importZip(u, first.zip);
    expect(imported.status, imported.text).toBe(201);
    expect(imported.body.agentId).not.toBe(agentId);
    expect(imported.headers.get('etag')).toBe(`"${imported.body.currentConfigId}"`);
    expect(imported.body.config.contentDigest).toBe(configs[2].contentDigest);
    const again = await documentOf((await exportZip(u, imported.body.agentId)).zip);
    expect(comparable(again.document)).toEqual(comparable(exported.document));
    expect(again.document.configs.every((c: { agentId: string; configId: string }) => c.agentId === imported.body.agentId && !configs.some((o) => o.configId === c.configId))).toBe(true);
    expect(again.knowledge).toEqual(exported.knowledge);
    // The imported Agent works like any: its aliases resolve, its knowledge is its own.
    const alias = await u.request('GET', `/v1/agents/${imported.body.agentId}/aliases/production`);
    expect(alias.body.config.contentDigest).toBe(configs[1].contentDigest);
    expect((await u.request('DELETE', `/v1/agents/${agentId}`)).status).toBe(204);
    await expect.poll(async () => (await documentOf((await exportZip(u, imported.body.agentId)).zip)).knowledge).toEqual(exported.knowledge);
  });

  it('agents — import with projectName rebinds every config; an unknown project → 404 and nothing is created', async () => {
    const u = await stack.user();
    const { agentId } = await agentWithHistory(u);
    const { zip } = await exportZip(u, agentId);
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Research' })).status).toBe(201);
    const moved = await importZip(u, zip, { projectName: 'research' });
    expect(moved.status, moved.text).toBe(201);
    const doc = await documentOf((await exportZip(u, moved.body.agentId)).zip);
    expect(doc.document.configs.map((c: { projectName: string }) => c.projectName)).toEqual(['Research', 'Research', 'Research']);
    const missing = await importZip(u, zip, { projectName: 'Nowhere' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('PROJECT_NOT_FOUND');
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(2);
  });

  it('agents — import honours Idempotency-Key: the same request twice makes one Agent', async () => {
    const u = await stack.user();
    const a = (await u.request('POST', '/v1/agents', { name: 'Once' })).body;
    const { zip } = await exportZip(u, a.agentId);
    const key = `import-${Date.now()}`;
    const [x, y] = await Promise.all([importZip(u, zip, { headers: { 'idempotency-key': key } }), importZip(u, zip, { headers: { 'idempotency-key': key } })]);
    expect([x.status, y.status]).toEqual([201, 201]);
    expect(x.body.agentId).toBe(y.body.agentId);
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(2);
  });

  it('agents — hostile archives (bomb, lying sizes, traversal names, 10,000 entries, 50 MiB agent.json, junk) → 400 each, nothing created', async () => {
    const u = await stack.user();
    const a = (await u.request('POST', '/v1/agents', { name: 'Base' })).body;
    const document = (await documentOf((await exportZip(u, a.agentId)).zip)).document;
    const json = (doc: unknown): RawEntry => ({ name: 'agent.json', data: Buffer.from(JSON.stringify(doc)), deflate: true });
    const zeros = Buffer.alloc(64 * 1024 * 1024);
    const withKnowledge = (sha: string, size: number) => ({ ...document, configs: [{ ...document.configs[0], knowledgeFiles: [{ path: '/files/k', size, sha256: sha, mimeType: 'text/plain' }] }] });
    const small = Buffer.from('small');
    const hostile: Record<string, Buffer> = {
      bomb: rawZip([json(withKnowledge(sha256(zeros), zeros.byteLength)), { name: `knowledge/${sha256(zeros)}`, data: zeros, deflate: true }]),
      lyingSize: rawZip([json(withKnowledge(sha256(small), 5)), { name: `knowledge/${sha256(small)}`, data: Buffer.alloc(8 * 1024 * 1024, 1), deflate: true, declaredSize: 5 }]),
      traversal: rawZip([json(document), { name: '../../etc/passwd', data: small }]),
      absolute: rawZip([json(document), { name: '/etc/passwd', data: small }]),
      backslash: rawZip([json(document), { name: 'knowledge\\x', data: small }]),
      manyEntries: rawZip([json(document), ...Array.from({ length: 10_000 }, (_, i) => ({ name: `knowledge/${sha256(String(i))}`, data: Buffer.from(String(i)) }))]),
      hugeJson: rawZip([{ name: 'agent.json', data: Buffer.concat([Buffer.from(JSON.stringify(document).slice(0, -1) + ',"pad":"'), Buffer.alloc(50 * 1024 * 1024, 'a'), Buffer.from('"}')]) }]),
      notZip: Buffer.from('this is not a zip file at all'),
      noAgentJson: rawZip([{ name: 'readme.txt', data: small }]),
      notJson: rawZip([{ name: 'agent.json', data: Buffer.from('{nope') }]),
      wrongFormat: rawZip([json({ ...document, format: 'other/v9' })]),
      missingKnowledge: rawZip([json(withKnowledge(sha256(small), 5))]),
      wrongBytes: rawZip([json(withKnowledge(sha256(small), 5)), { name: `knowledge/${sha256(small)}`, data: Buffer.from('SMALL') }]),
      badField: rawZip([json({ ...document, configs: [{ ...document.configs[0], responseMode: 'loud' }] })]),
      badAlias: rawZip([json({ ...document, aliases: [{ alias: 'prod', configId: 'cfg_' + '9'.repeat(32), description: '' }] })]),
    };
    const rssOf = async () => Number(/process_resident_memory_bytes\{[^}]*\} (\d+)/.exec(await stack.metricsOf('gateway'))?.[1]);
    const before = await rssOf();
    for (const [name, zip] of Object.entries(hostile)) {
      const res = await importZip(u, zip);
      expect(res.status, `${name}: ${res.text}`).toBe(400);
      expect(res.body.error.code, name).toBe('INVALID_ARGUMENT');
      expect(res.body.error.details?.field, name).toEqual(expect.any(String));
    }
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(1);
    // The gateway (which reads archives) stayed small: 64 MiB of zeros and a 50 MiB agent.json were never held.
    const after = await rssOf();
    console.info(`e2e: gateway RSS ${Math.round(before / 2 ** 20)} MiB before the hostile archives, ${Math.round(after / 2 ** 20)} MiB after`);
    expect(before).toBeGreaterThan(0);
    expect(after - before).toBeLessThan(128 * 1024 * 1024);
  });

  it('agents — export and import refuse what they must: unknown Agent 404, no file part 400, JSON body 415', async () => {
    const u = await stack.user();
    expect((await exportZip(u, `agt_${'0'.repeat(32)}`)).res.status).toBe(404);
    const stranger = await stack.user();
    const a = (await u.request('POST', '/v1/agents', { name: 'Mine' })).body;
    expect((await exportZip(stranger, a.agentId)).res.status).toBe(404);
    const form = new FormData();
    form.append('projectName', 'Home');
    const noFile = await request(`${stack.url}/v1/agents/import`, { method: 'POST', headers: { authorization: `Bearer ${u.token}` }, body: form });
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.details.field).toBe('file');
    expect((await u.request('POST', '/v1/agents/import', { file: 'x' })).status).toBe(415);
  });
});
