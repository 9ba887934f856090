import { randomBytes } from 'node:crypto';
import { tenantKey } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client, testRedis } from './support/backends.js';
import { put, sha256 } from './support/files-api.js';
import { rawZip, type RawEntry } from '@workspace/testkit';
import { request, startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * POST /v1/agents/import held to the rules every other way in obeys: the byte quota (reserved
 * before the knowledge bytes are sent, nothing left behind on a refusal), bounded inflation,
 * agent.json checked on its raw bytes before it is parsed, and every value validated as create
 * and PATCH validate it.
 */

const MiB = 1024 * 1024;
const QUOTA = 48 * MiB;
const CONFIG_RETENTION = 5;
const MAX_AGENTS = 4;

let stack: Stack;
/** A configuration as an export writes it (every field), to build archives from. */
let exported: Record<string, unknown>;

beforeAll(async () => {
  stack = await startStack({
    env: { CONFIG_RETENTION: String(CONFIG_RETENTION), MAX_AGENTS: String(MAX_AGENTS) },
    filesEnv: { FILE_QUOTA_BYTES: String(QUOTA), FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500' },
  });
  const u = await stack.user();
  const a = (await u.request('POST', '/v1/agents', { name: 'Template' })).body;
  const res = await fetch(`${stack.url}/v1/agents/${a.agentId}/export`, { headers: { authorization: `Bearer ${u.token}` } });
  const zip = Buffer.from(await res.arrayBuffer());
  const { unzip } = await import('./support/zip.js');
  const json = (await unzip(zip)).find((e) => e.name === 'agent.json')!;
  exported = JSON.parse(json.content.toString('utf8')).configs[0];
});
afterAll(async () => {
  await stack?.stop();
});

const cfg = (n: number) => `cfg_${n.toString(16).padStart(32, '0')}`;

/** The n-th configuration of a made-up history (n ≥ 1), its parent the one before. */
function config(n: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...exported, configId: cfg(n), parentConfigId: n > 1 ? cfg(n - 1) : null, name: `v${n}`, changeNote: `note ${n}`, createdAt: new Date(Date.UTC(2025, 0, n)).toISOString(), ...over };
}

function document(configs: Record<string, unknown>[], aliases: unknown[] = []) {
  return { format: 'workspace.agent/v1', exportedAt: new Date().toISOString(), configs, aliases };
}

const knowledgeOf = (files: Buffer[], offset = 0) => files.map((b, i) => ({ path: `/files/kb/${offset + i}.bin`, size: b.byteLength, sha256: sha256(b), mimeType: 'application/octet-stream' }));

/** An archive of agent.json (`doc`, or raw bytes) and the knowledge files as `knowledge/<sha256>`. */
function archive(doc: unknown, knowledge: Buffer[] = [], options: { deflate?: boolean } = {}): Buffer {
  const json: RawEntry = { name: 'agent.json', data: Buffer.isBuffer(doc) ? doc : Buffer.from(JSON.stringify(doc)), deflate: options.deflate ?? true };
  const unique = [...new Map(knowledge.map((b) => [sha256(b), b])).values()];
  return rawZip([json, ...unique.map((b) => ({ name: `knowledge/${sha256(b)}`, data: b, deflate: options.deflate ?? true }))]);
}

/** An archive whose configs pin `files` (20 to a config, the contract's most). */
function archiveWithKnowledge(files: Buffer[]): Buffer {
  const configs = [];
  for (let i = 0; i < files.length; i += 20) configs.push(config(configs.length + 1, { knowledgeFiles: knowledgeOf(files.slice(i, i + 20), i) }));
  return archive(document(configs), files);
}

function importZip(u: ApiUser, zip: Buffer): Promise<ApiResponse> {
  const form = new FormData();
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'agent.zip');
  return request(`${stack.url}/v1/agents/import`, { method: 'POST', headers: { authorization: `Bearer ${u.token}` }, body: form });
}

async function usage(u: ApiUser): Promise<{ files: { count: number; bytes: number; quotaBytes: number }; agents: { count: number } }> {
  const res = await u.request('GET', '/v1/usage');
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/**
 * What a refused import could leave of the user's in the files service: pending uploads,
 * reservations, objects in the bucket that nothing references, garbage not yet swept.
 */
function traces(u: ApiUser) {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const prefix = `{u:${tenantKey(u.sub)}}:fs:${bucket}:`;
  return {
    redis: async () => {
      const redis = testRedis('import-traces');
      try {
        const [up, upx, rsv, rsvt] = await Promise.all([redis.hlen(`${prefix}up`), redis.zcard(`${prefix}upx`), redis.hlen(`${prefix}rsv`), redis.get(`${prefix}rsvt`)]);
        return { up, upx, rsv, rsvt: Number(rsvt ?? 0) };
      } finally {
        await redis.quit();
      }
    },
    /** Objects in the bucket that the index does not reference (0 once the sweep has run). */
    unreferenced: async () => {
      const redis = testRedis('import-refs');
      try {
        const referenced = new Set(await redis.hkeys(`${prefix}refs`));
        const stored: string[] = [];
        for await (const o of s3Client().listObjectsV2(bucket, `b/${tenantKey(u.sub)}/`, true) as AsyncIterable<{ name?: string }>) if (o.name) stored.push(o.name);
        return stored.filter((k) => !referenced.has(k)).length + (await redis.zcard(`${prefix}gc`));
      } finally {
        await redis.quit();
      }
    },
  };
}

async function expectNoTraces(u: ApiUser): Promise<void> {
  const t = traces(u);
  expect(await t.redis()).toEqual({ up: 0, upx: 0, rsv: 0, rsvt: 0 });
  await expect.poll(() => t.unreferenced(), { timeout: 30_000, interval: 250 }).toBe(0);
}

const distinct = (n: number, size: number) => Array.from({ length: n }, () => randomBytes(size));


/** Three imports of `zip` at once while `other` lists their Agents without pause: the answers, and the other user's latencies (ms). */
async function threeWhileAnotherReads(u: ApiUser, other: ApiUser, zip: Buffer): Promise<{ results: ApiResponse[]; latencies: number[] }> {
  let done = false;
  const latencies: number[] = [];
  const meanwhile = (async () => {
    while (!done) {
      const t = performance.now();
      expect((await other.request('GET', '/v1/agents')).status).toBe(200);
      latencies.push(performance.now() - t);
    }
  })();
  const results = await Promise.all([importZip(u, zip), importZip(u, zip), importZip(u, zip)]);
  done = true;
  await meanwhile;
  return { results, latencies };
}

describe('agents import — the byte quota (FILE_QUOTA_BYTES), reserved before the knowledge bytes are sent', () => {
  it('import — with the quota full (an upload → 403), 40 MiB of knowledge → 403 QUOTA_EXCEEDED with quota, limit and used; usage unchanged, no Agent, nothing left behind', async () => {
    const u = await stack.user();
    const room = QUOTA - (await usage(u)).files.bytes;
    expect((await put(stack, u, '/files/full.bin', randomBytes(room))).size).toBe(room);
    const upload = await u.request('POST', '/v1/agents', { name: 'probe' }); // an Agent costs no bytes
    expect(upload.status).toBe(201);
    const more = new FormData();
    more.append('file', new Blob([Buffer.from('x')]), 'x.bin');
    const refused = await request(`${stack.url}/v1/agent/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${u.token}` }, body: more });
    expect(refused.status, refused.text).toBe(403);
    const before = await usage(u);

    const res = await importZip(u, archiveWithKnowledge(distinct(40, MiB)));
    expect(res.status, res.text).toBe(403);
    expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(res.body.error.details.quota).toBe('FILE_QUOTA_BYTES');
    expect(Number(res.body.error.details.limit)).toBe(QUOTA);
    expect(Number(res.body.error.details.used)).toBe(QUOTA);
    expect(await usage(u)).toEqual(before);
    expect(before.agents.count).toBe(1);
    await expectNoTraces(u);
  }, 120_000);

  it('import — within the quota the knowledge counts: usage grows by its bytes, the reservation is settled', async () => {
    const u = await stack.user();
    const before = await usage(u);
    const files = distinct(3, MiB);
    const res = await importZip(u, archiveWithKnowledge(files));
    expect(res.status, res.text).toBe(201);
    expect((await usage(u)).files.bytes).toBe(before.files.bytes + 3 * MiB);
    await expectNoTraces(u);
  }, 60_000);

  it('import — concurrent imports that together pass the quota: only those that fit succeed, nothing else is kept', async () => {
    const u = await stack.user();
    const base = await usage(u);
    const size = 12 * MiB;
    const archives = Array.from({ length: 6 }, () => archiveWithKnowledge(distinct(12, MiB)));
    const results = await Promise.all(archives.map((zip) => importZip(u, zip)));
    const ok = results.filter((r) => r.status === 201).length;
    for (const r of results) if (r.status !== 201) expect(r.body?.error, r.text).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'FILE_QUOTA_BYTES' } });
    expect(ok).toBe(Math.floor((QUOTA - base.files.bytes) / size));
    const after = await usage(u);
    expect(after.files.bytes).toBe(base.files.bytes + ok * size);
    expect(after.files.bytes).toBeLessThanOrEqual(QUOTA);
    expect(after.agents.count).toBe(ok);
    await expectNoTraces(u);
  }, 180_000);
});

describe('agents import — MAX_AGENTS', () => {
  it('import — refused by MAX_AGENTS after its knowledge was pinned → 403, and the pinned bytes do not stay (usage unchanged, nothing left behind)', async () => {
    const u = await stack.user();
    for (let i = 0; i < MAX_AGENTS; i++) expect((await u.request('POST', '/v1/agents', { name: `a${i}` })).status).toBe(201);
    const before = await usage(u);
    const res = await importZip(u, archiveWithKnowledge(distinct(3, MiB)));
    expect(res.status, res.text).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_AGENTS' } });
    await expect.poll(async () => (await usage(u)).files.bytes, { timeout: 10_000 }).toBe(before.files.bytes);
    expect((await usage(u)).agents.count).toBe(MAX_AGENTS);
    await expectNoTraces(u);
  }, 60_000);
});

describe('agents import — inflation is bounded: every entry and the archive as a whole', () => {
  it('import — knowledge of exactly 1 MiB of zeros (it deflates ~1000:1) → 400 (field file), nothing created', async () => {
    const u = await stack.user();
    const zeros = Array.from({ length: 3 }, (_, i) => Buffer.concat([Buffer.alloc(MiB - 1), Buffer.from([i])]));
    const zip = archiveWithKnowledge(zeros);
    expect(zip.byteLength).toBeLessThan(32 * 1024);
    const res = await importZip(u, zip);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file' } });
    expect((await usage(u)).agents.count).toBe(0);
    await expectNoTraces(u);
  });

  it('import — knowledge that is small or does not deflate well is accepted', async () => {
    const u = await stack.user();
    const files = [Buffer.alloc(32 * 1024, 'a'), randomBytes(2 * MiB), Buffer.from('hello\n')];
    const res = await importZip(u, archiveWithKnowledge(files));
    expect(res.status, res.text).toBe(201);
  });
});

describe('agents import — agent.json is checked on its raw bytes before it is parsed', () => {
  const brackets = (bytes: number) => Buffer.concat([Buffer.alloc(bytes / 2, '['), Buffer.alloc(bytes / 2, ']')]);
  const rssOf = async () => Number(/process_resident_memory_bytes\{[^}]*\} (\d+)/.exec(await stack.metricsOf('gateway'))?.[1]);

  it('import — a 16 MiB agent.json of nested brackets → 400 (field file, "nested") at once, the gateway stays small, and three at once do not make another user wait', async () => {
    const u = await stack.user();
    const other = await stack.user();
    const zip = archive(brackets(16 * MiB), [], { deflate: false });
    const before = await rssOf();
    const { results, latencies } = await threeWhileAnotherReads(u, other, zip);
    for (const res of results) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file' } });
      expect(res.body.error.message).toMatch(/nested/);
    }
    const after = await rssOf();
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!;
    console.info(`e2e: gateway RSS ${Math.round(before / MiB)} MiB before 3 hostile imports, ${Math.round(after / MiB)} MiB after; another user's GET p99 ${p99.toFixed(1)} ms over ${latencies.length} requests`);
    expect(after - before).toBeLessThan(128 * MiB);
    expect(p99).toBeLessThan(2_000);
    expect((await usage(u)).agents.count).toBe(0);
  }, 120_000);

  it('import — 16 MiB of tiny values (`[[],[],…]`, shallow enough for the depth bound) three at once → 400 (field file) before they are parsed (they would take ~25× their size); another user is answered meanwhile', async () => {
    const u = await stack.user();
    const other = await stack.user();
    const flat = Buffer.concat([Buffer.from('['), Buffer.alloc(16 * MiB - 4, '[],'), Buffer.from('[]]')]).subarray(0, 16 * MiB);
    flat.write(']', flat.length - 1);
    const zip = archive(flat, [], { deflate: false });
    const { results, latencies } = await threeWhileAnotherReads(u, other, zip);
    for (const res of results) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file' }, message: expect.stringContaining('more values than an import takes') });
    }
    console.info(`e2e: another user's GET during 3 imports of 16 MiB of [] values: max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length} requests`);
    expect((await usage(u)).agents.count).toBe(0);
  }, 120_000);

  it('import — agent.json that is not UTF-8, or holds a number beyond ±1.8e308 → 400 (field file); never stored as U+FFFD', async () => {
    const u = await stack.user();
    const text = JSON.stringify(document([config(1, { name: 'NAME' })]));
    const latin1 = Buffer.from(text.replace('NAME', 'caf\u00e9'), 'latin1');
    const huge = Buffer.from(text.replace('"schemaVersion":1', '"schemaVersion":1e999'));
    for (const bytes of [latin1, huge]) {
      const res = await importZip(u, archive(bytes));
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file' } });
    }
    expect((await usage(u)).agents.count).toBe(0);
  });
});

describe('agents import — every value as create and PATCH would take it', () => {
  it('import — values create or PATCH refuse → 400 INVALID_ARGUMENT naming the place in agent.json; nothing created, nothing left behind', async () => {
    const u = await stack.user();
    const kb = Buffer.from('knowledge\n');
    const withPath = (path: string) => config(1, { knowledgeFiles: [{ path, size: kb.byteLength, sha256: sha256(kb), mimeType: 'text/plain' }] });
    const future = new Date(Date.now() + 60 * 60_000).toISOString();
    const cases: [string, Buffer, string][] = [
      ['lone surrogate in changeNote', archive(document([config(1, { changeNote: 'a\ud800b' })])), 'configs[0].changeNote'],
      ['lone surrogate in name', archive(document([config(1, { name: '\udc00' })])), 'configs[0].name'],
      ['changeNote over 1,000 characters', archive(document([config(1, { changeNote: 'n'.repeat(1_001) })])), 'configs[0].changeNote'],
      ['lone surrogate in an alias description', archive(document([config(1)], [{ alias: 'prod', configId: cfg(1), description: '\ud800' }])), 'aliases[0].description'],
      ['traversal in a knowledge path', archive(document([withPath('../../etc/passwd')]), [kb]), 'configs[0].knowledgeFiles[0].path'],
      ['dot-dot segment in a knowledge path', archive(document([withPath('/files/a/../../etc/passwd')]), [kb]), 'configs[0].knowledgeFiles[0].path'],
      ['a knowledge path outside /files', archive(document([withPath('/filesx/a')]), [kb]), 'configs[0].knowledgeFiles[0].path'],
      ['the root as a knowledge path', archive(document([withPath('/files')]), [kb]), 'configs[0].knowledgeFiles[0].path'],
      ['a control character in a knowledge path', archive(document([withPath('/files/a\u0001b')]), [kb]), 'configs[0].knowledgeFiles[0].path'],
      ['a lone surrogate in a knowledge mimeType', archive(document([config(1, { knowledgeFiles: [{ path: '/files/k', size: kb.byteLength, sha256: sha256(kb), mimeType: '\ud800' }] })]), [kb]), 'configs[0].knowledgeFiles[0].mimeType'],
      ['parentConfigId of itself', archive(document([config(1, { parentConfigId: cfg(1) })])), 'configs[0].parentConfigId'],
      ['parentConfigId cycle A → B → A', archive(document([config(1, { parentConfigId: cfg(2) }), config(2)])), 'configs[0].parentConfigId'],
      ['createdAt in the future', archive(document([config(1), config(2, { createdAt: future })])), 'configs[1].createdAt'],
      ['more configs than CONFIG_RETENTION', archive(document(Array.from({ length: CONFIG_RETENTION + 1 }, (_, i) => config(i + 1)))), 'configs'],
      ['an unknown field', archive(document([config(1, { colour: 'red' })])), 'configs[0].colour'],
    ];
    for (const [name, zip, field] of cases) {
      const res = await importZip(u, zip);
      expect(res.status, `${name}: ${res.text}`).toBe(400);
      expect(res.body.error, name).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    expect((await usage(u)).agents.count).toBe(0);
    await expectNoTraces(u);
  }, 120_000);

  it('import — what an export writes is taken back: CONFIG_RETENTION configs, a createdAt a minute ahead (clock skew), a valid knowledge path', async () => {
    const u = await stack.user();
    const kb = Buffer.from('knowledge\n');
    const configs = Array.from({ length: CONFIG_RETENTION }, (_, i) => config(i + 1));
    configs[CONFIG_RETENTION - 1] = config(CONFIG_RETENTION, { createdAt: new Date(Date.now() + 60_000).toISOString(), knowledgeFiles: knowledgeOf([kb]) });
    const res = await importZip(u, archive(document(configs, [{ alias: 'prod', configId: cfg(2), description: 'd' }]), [kb]));
    expect(res.status, res.text).toBe(201);
    expect(res.body.config.knowledgeFiles).toEqual(knowledgeOf([kb]));
    const versions = (await u.request('GET', `/v1/agents/${res.body.agentId}/versions`)).body.versions;
    expect(versions).toHaveLength(CONFIG_RETENTION);
  });
});
