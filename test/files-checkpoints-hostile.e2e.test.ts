import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditIndex, storedObjects } from './support/files-index-check.js';
import { q, upload as uploadForm } from './support/files.js';
import { download, list, move, ok, put, read, sha256, stat } from './support/files-api.js';
import { mcpPost } from './support/mcp.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * A hostile review of checkpoints, rewind and fork (docs/api/files.md#checkpoints, #rewind, #fork)
 * and of the MCP tools create_checkpoint and rewind (docs/api/mcp.md): ids and times a client
 * should not send, other users' checkpoints, races on the cap and on one tree, round trips that
 * must give back the exact bytes, and an audit of the index (test/support/files-index-check.ts)
 * after each attack.
 */
const MAX_CHECKPOINTS = 12;
const QUOTA = 100_000;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    filesEnv: { FILE_QUOTA_BYTES: String(QUOTA), FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500', MAX_CHECKPOINTS: String(MAX_CHECKPOINTS) },
    gatewayEnv: { MAX_CONCURRENT_UPLOADS: '32', RATE_LIMIT_BURST: '100000', RATE_LIMIT_PER_SECOND: '100000' },
  });
});
afterAll(async () => {
  await stack?.stop();
});

const CKP = /^ckp_[0-9a-f]{32}$/;
const hex = (n: number) => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);

const checkpoint = (u: ApiUser, body: unknown = {}): Promise<ApiResponse> => u.request('POST', '/v1/agent/files/checkpoints', body);
const rewind = (u: ApiUser, path: string, to: unknown): Promise<ApiResponse> => u.request('POST', '/v1/agent/files/rewind', { path, to });
const fork = (u: ApiUser, body: Record<string, unknown>): Promise<ApiResponse> => u.request('POST', '/v1/agent/files/copy', body);
const remove = (u: ApiUser, path: string, options: { recursive?: boolean; permanent?: boolean } = {}) =>
  u.request('DELETE', `/v1/agent/files?path=${q(path)}&recursive=${options.recursive ?? false}${options.permanent ? '&permanent=true' : ''}`);

async function taken(u: ApiUser, path: string, label = ''): Promise<{ checkpointId: string; path: string; createdAt: string; files: number; bytes: number }> {
  const res = await checkpoint(u, { path, label });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Every file at or below `path`: path → sha256 of the listing (empty when the path does not exist). */
async function tree(u: ApiUser, path: string): Promise<Record<string, string>> {
  const res = await u.request('GET', `/v1/agent/files?path=${q(path)}&recursive=true`);
  if (res.status === 404) return {};
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries((res.body.entries as { path: string; type: string; sha256?: string }[]).filter((e) => e.type === 'file').map((e) => [e.path, e.sha256!]));
}

/** Every file at or below `path`: path → sha256 of the bytes a download gives (checked against the listing). */
async function bytesTree(u: ApiUser, path: string): Promise<Record<string, string>> {
  const listed = await tree(u, path);
  const out: Record<string, string> = {};
  for (const [p, h] of Object.entries(listed)) {
    const got = await download(stack.url, u, p);
    expect(got.status, p).toBe(200);
    expect(got.sha256, `download of ${p} is what the listing says`).toBe(h);
    out[p] = got.sha256;
  }
  return out;
}

const usageOf = async (u: ApiUser) => {
  const res = await u.request('GET', '/v1/usage');
  expect(res.status, res.text).toBe(200);
  return res.body as { files: { count: number; bytes: number; quotaBytes: number }; checkpoints: { count: number; bytes: number; limit: number } };
};

const checkpointIds = async (u: ApiUser, path = '/files'): Promise<string[]> => {
  const res = await u.request('GET', `/v1/agent/files/checkpoints?path=${q(path)}`);
  expect(res.status, res.text).toBe(200);
  return (res.body.checkpoints as { checkpointId: string }[]).map((c) => c.checkpointId);
};

/** The index is consistent, usage is exact and matches the listing and the checkpoints. */
async function expectSound(u: ApiUser): Promise<void> {
  const audit = await auditIndex(stack, u);
  expect(audit.problems).toEqual([]);
  expect(audit.reserved).toEqual({ total: 0, uploads: 0 });
  const files = (await list(u, '/files', { recursive: true })).filter((e) => e.type === 'file').length;
  const usage = await usageOf(u);
  expect(usage.files).toMatchObject({ count: files, bytes: audit.bytes });
  expect(usage.checkpoints.count).toBe((await checkpointIds(u)).length);
}

/** An upload that may be refused (no expectation on its status). */
const upload = (u: ApiUser, path: string, content: Uint8Array) => uploadForm(stack.url, u, { filename: 'ignored', content }, { path, onConflict: 'overwrite' }) as Promise<ApiResponse>;

/** The error envelope (docs/api/conventions.md#errors) and nothing else: code, message, requestId (= X-Request-Id), optional details. */
function envelope(res: ApiResponse, status: number, code: string): Record<string, unknown> {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.body ?? {}), res.text).toEqual(['error']);
  expect(res.body.error, res.text).toMatchObject({ code, message: expect.any(String), requestId: res.headers.get('x-request-id') });
  expect(Object.keys(res.body.error).every((k) => ['code', 'message', 'requestId', 'details'].includes(k)), res.text).toBe(true);
  expect(res.text).not.toMatch(/at .*\.(js|ts):\d+|ERR |lua|redis|grpc|127\.0\.0\.1/i);
  return res.body.error;
}

function no5xx(responses: ApiResponse[]): void {
  for (const r of responses) expect(r.status, r.text).toBeLessThan(500);
}

async function seed(u: ApiUser, root = '/files/w'): Promise<void> {
  await put(stack, u, `${root}/a.txt`, 'a0');
  await put(stack, u, `${root}/a.txt`, 'a1');
  await put(stack, u, `${root}/b.bin`, Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256)));
  await put(stack, u, `${root}/sub/c.txt`, 'c');
  await put(stack, u, `${root}/sub/deep/d.txt`, 'd');
  await put(stack, u, `${root}/same1.txt`, 'same');
  await put(stack, u, `${root}/same2.txt`, 'same');
}

/** A moment strictly after everything before it and strictly before everything after it. */
async function moment(): Promise<string> {
  await new Promise((r) => setTimeout(r, 5));
  const at = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  return at;
}

describe('checkpoints — hostile ids', () => {
  it('malformed ids (31/33 hex, upper case, traversal, unicode, 10 KB, bad percent-encoding) on get, delete, rewind and fork: 404 CHECKPOINT_NOT_FOUND in the envelope, nothing changes', async () => {
    const u = await stack.user();
    await seed(u);
    const real = await taken(u, '/files/w', 'real');
    const before = await tree(u, '/files');
    const ids = [
      `ckp_${hex(31)}`,
      `ckp_${hex(33)}`,
      `ckp_${real.checkpointId.slice(4).toUpperCase()}`,
      `${real.checkpointId} `,
      `${real.checkpointId}\n`,
      `ckp_../../${hex(26)}`,
      `ckp_ü${hex(31)}`,
      `ckp_${'💥'.repeat(16)}`,
      'ckp_',
      `ckp_${'a'.repeat(96)}`,
    ];
    for (const id of ids) {
      for (const method of ['GET', 'DELETE']) {
        const res = await u.request(method, `/v1/agent/files/checkpoints/${encodeURIComponent(id)}`);
        envelope(res, 404, 'CHECKPOINT_NOT_FOUND');
      }
      envelope(await rewind(u, '/files/w', id), 404, 'CHECKPOINT_NOT_FOUND');
      envelope(await fork(u, { from: '/files/w', to: '/files/forked', at: id }), 404, 'CHECKPOINT_NOT_FOUND');
    }
    // 10 KB: GET and DELETE look it up (404); in a body it is too long for `to`/`at` (400 naming the field) or unknown (404).
    const huge = `ckp_${'a'.repeat(10_000)}`;
    for (const method of ['GET', 'DELETE']) envelope(await u.request(method, `/v1/agent/files/checkpoints/${huge}`), 404, 'CHECKPOINT_NOT_FOUND');
    for (const [res, field] of [
      [await rewind(u, '/files/w', huge), 'to'],
      [await fork(u, { from: '/files/w', to: '/files/forked', at: huge }), 'at'],
    ] as const) {
      if (res.status === 400) expect(envelope(res, 400, 'INVALID_ARGUMENT').details).toEqual({ field });
      else envelope(res, 404, 'CHECKPOINT_NOT_FOUND');
    }
    // What the HTTP layer cannot decode, and encoded traversal: refused in the envelope, never a 5xx.
    for (const raw of ['%ZZ', '%C0%AF', '%E0%A4%A', '..%2F..%2Fusage', `ckp_${hex(31)}%00`]) {
      for (const method of ['GET', 'DELETE']) {
        const res = await u.request(method, `/v1/agent/files/checkpoints/${raw}`);
        expect([400, 404], `${method} ${raw}: ${res.text}`).toContain(res.status);
        envelope(res, res.status, res.status === 400 ? 'INVALID_ARGUMENT' : 'CHECKPOINT_NOT_FOUND');
      }
    }
    expect(await tree(u, '/files')).toEqual(before);
    expect(await checkpointIds(u)).toEqual([real.checkpointId]);
    expect((await u.request('GET', `/v1/agent/files/checkpoints/${real.checkpointId}`)).body).toEqual(real);
    await expectSound(u);
  });

  it('another user\'s checkpoint on every route (get, delete, rewind, fork, list, MCP rewind): the same 404 as an id that never existed, nothing revealed or changed', async () => {
    const owner = await stack.user();
    const other = await stack.user();
    await put(stack, owner, '/files/secret-project/plan.txt', 'the owner\'s plan');
    const theirs = await taken(owner, '/files/secret-project', 'top secret label');
    await put(stack, other, '/files/secret-project/mine.txt', 'the other\'s file');
    const otherTree = await tree(other, '/files');
    const never = `ckp_${hex(32)}`;
    const answers = async (id: string) => [
      await other.request('GET', `/v1/agent/files/checkpoints/${id}`),
      await other.request('DELETE', `/v1/agent/files/checkpoints/${id}`),
      await rewind(other, '/files/secret-project', id),
      await rewind(other, '/files', id),
      await fork(other, { from: '/files/secret-project', to: '/files/stolen', at: id }),
      await fork(other, { from: '/files/secret-project/plan.txt', to: '/files/stolen.txt', at: id }),
    ];
    const foreign = await answers(theirs.checkpointId);
    const unknown = await answers(never);
    for (const [i, res] of foreign.entries()) {
      const e = envelope(res, 404, 'CHECKPOINT_NOT_FOUND');
      expect(res.text).not.toMatch(/top secret|plan\.txt|owner/);
      const u = envelope(unknown[i]!, 404, 'CHECKPOINT_NOT_FOUND');
      expect({ ...e, requestId: '', message: String(e.message).replace(theirs.checkpointId, 'ID') }).toEqual({ ...u, requestId: '', message: String(u.message).replace(never, 'ID') });
    }
    expect(await checkpointIds(other)).toEqual([]);
    expect((await usageOf(other)).checkpoints.count).toBe(0);
    expect(await tree(other, '/files')).toEqual(otherTree);
    // Over MCP too.
    const sid = await mcpOpen(other);
    const res = await mcpSend(other, sid, toolCall('rewind', { path: '/files/secret-project', to: theirs.checkpointId }));
    expect(res.body.result, JSON.stringify(res.body)).toMatchObject({ isError: true, structuredContent: { error: { code: 'CHECKPOINT_NOT_FOUND' } } });
    expect(JSON.stringify(res.body)).not.toMatch(/top secret|plan\.txt/);
    expect(await tree(other, '/files')).toEqual(otherTree);
    // The owner's is untouched.
    expect((await owner.request('GET', `/v1/agent/files/checkpoints/${theirs.checkpointId}`)).body).toEqual(theirs);
    expect(await checkpointIds(owner)).toEqual([theirs.checkpointId]);
    await expectSound(owner);
    await expectSound(other);
  });
});

describe('checkpoints — hostile bodies', () => {
  it('labels: 200 characters, control characters and JSON-looking text round-trip exactly; 201 characters, a lone surrogate or a non-string are 400 (field label)', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/l/x.txt', 'x');
    const good = ['x'.repeat(200), 'é'.repeat(200), '\u0000\u0001\t\n\r\u001f\u007f\u0085', '{"path":"/files","label":"x"}', '\\"\'/<script>', '日本語 — ünïcödé', '   ', '[]', '123'];
    const ids: string[] = [];
    for (const label of good) {
      const res = await checkpoint(u, { path: '/files/l', label });
      expect(res.status, `${JSON.stringify(label)}: ${res.text}`).toBe(201);
      expect(res.body.label).toBe(label);
      ids.push(res.body.checkpointId);
      const got = await u.request('GET', `/v1/agent/files/checkpoints/${res.body.checkpointId}`);
      expect(got.body.label, JSON.stringify(label)).toBe(label);
    }
    const listed = (await u.request('GET', '/v1/agent/files/checkpoints?path=/files/l')).body.checkpoints as { checkpointId: string; label: string }[];
    expect(listed.map((c) => c.label)).toEqual([...good].reverse());
    for (const label of ['x'.repeat(201), 'a\ud800b', '\udc00', 5, null, ['x'], { a: 1 }, true]) {
      const res = await checkpoint(u, { path: '/files/l', label });
      expect(envelope(res, 400, 'INVALID_ARGUMENT').details, JSON.stringify(label)).toEqual({ field: 'label' });
    }
    for (const body of [null, [], 'x', 1, { path: '/files/l', extra: true }, { path: 5 }, { path: ['/files/l'] }, { path: null }]) {
      const res = await checkpoint(u, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      envelope(res, 400, 'INVALID_ARGUMENT');
    }
    expect(await checkpointIds(u)).toEqual([...ids].reverse());
    await expectSound(u);
  });

  it('a label of 200 characters outside the BMP (🚀 × 200, 400 UTF-16 units) is ≤ 200 characters: 201 over HTTP and MCP, as Agents count characters; 201 of them → 400', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/l/x.txt', 'x');
    const rockets = '🚀'.repeat(200);
    const res = await checkpoint(u, { path: '/files/l', label: rockets });
    const sid = await mcpOpen(u);
    const byMcp = await mcpSend(u, sid, toolCall('create_checkpoint', { path: '/files/l', label: rockets }));
    expect({ http: res.status, mcp: byMcp.body.result?.isError === false || (byMcp.body.result && !byMcp.body.result.isError) ? 'ok' : 'refused' }, `${res.text} / ${JSON.stringify(byMcp.body).slice(0, 300)}`).toEqual({ http: 201, mcp: 'ok' });
    expect(res.body.label).toBe(rockets);
    expect(byMcp.body.result.structuredContent.label).toBe(rockets);
    expect(envelope(await checkpoint(u, { path: '/files/l', label: `${rockets}🚀` }), 400, 'INVALID_ARGUMENT').details).toEqual({ field: 'label' });
  });

  it('paths: trailing slash, `..`, `//`, outside /files, a file, a path that does not exist, a list with two paths: the path rules (docs/api/files.md#paths), never a 5xx', async () => {
    const u = await stack.user();
    await seed(u);
    expect((await taken(u, '/files/')).path).toBe('/files');
    expect((await taken(u, '/files/w/')).path).toBe('/files/w');
    const file = await taken(u, '/files/w/a.txt');
    expect(file).toMatchObject({ path: '/files/w/a.txt', files: 1, bytes: 2 });
    for (const path of ['/files/w/../w', '/files//w', '/filesx', 'files/w', '/files/w/./sub', '/files/a\\b', '/files/\u0001', `/files/${'a'.repeat(256)}`]) {
      const res = await checkpoint(u, { path });
      expect(res.status, `${JSON.stringify(path)}: ${res.text}`).toBe(400);
      envelope(res, 400, 'INVALID_PATH');
      for (const r of [await rewind(u, path, file.checkpointId), await u.request('GET', `/v1/agent/files/checkpoints?path=${q(path)}`)]) {
        expect(r.status, `${JSON.stringify(path)}: ${r.text}`).toBe(400);
        envelope(r, 400, 'INVALID_PATH');
      }
    }
    envelope(await checkpoint(u, { path: '/files/w/nothing' }), 404, 'FILE_NOT_FOUND');
    envelope(await checkpoint(u, { path: '/files/w/a.txt/below-a-file' }), 404, 'FILE_NOT_FOUND');
    const twice = await u.request('GET', '/v1/agent/files/checkpoints?path=/files/w&path=/files');
    expect(envelope(twice, 400, 'INVALID_ARGUMENT').details).toEqual({ field: 'path' });
    expect((await u.request('GET', '/v1/agent/files/checkpoints?path=/files/nowhere')).body).toEqual({ checkpoints: [] });
    // The checkpoint of a file rewinds that file, and only it.
    await put(stack, u, '/files/w/a.txt', 'a-later');
    await put(stack, u, '/files/w/sub/c.txt', 'c-later');
    const back = await rewind(u, '/files/w/a.txt/', file.checkpointId);
    expect(back.status, back.text).toBe(200);
    expect(back.body).toMatchObject({ path: '/files/w/a.txt', restored: 1, removed: 0, unchanged: 0 });
    expect((await read(u, '/files/w/a.txt')).body.content).toBe('a1');
    expect((await read(u, '/files/w/sub/c.txt')).body.content).toBe('c-later');
    // ... and it does not cover its folder, nor a sibling.
    for (const path of ['/files/w', '/files', '/files/w/b.bin']) expect(envelope(await rewind(u, path, file.checkpointId), 400, 'INVALID_ARGUMENT').details).toEqual({ field: 'to' });
    await expectSound(u);
  });

  it('an empty `path` is no path (docs/api/files.md#paths: it does not start with /files): 400 INVALID_PATH on create, rewind, the checkpoint list and the changes cursor, not the whole workspace', async () => {
    const u = await stack.user();
    await seed(u);
    const c = await taken(u, '/files/w');
    const created = await checkpoint(u, { path: '', label: 'empty path' });
    const rewound = await rewind(u, '', c.checkpointId);
    expect({ create: created.status, rewind: rewound.status }, `${created.text} / ${rewound.text}`).toEqual({ create: 400, rewind: 400 });
    envelope(created, 400, 'INVALID_PATH');
    envelope(rewound, 400, 'INVALID_PATH');
    expect(await checkpointIds(u)).toEqual([c.checkpointId]);
    // The same in a query, as for a listing of files: an empty path is no path (omit it for /files).
    for (const url of ['/v1/agent/files/checkpoints?path=', '/v1/agent/files/changes/cursor?path=', '/v1/agent/files?path=']) envelope(await u.request('GET', url), 400, 'INVALID_PATH');
    expect((await u.request('GET', '/v1/agent/files/checkpoints')).body.checkpoints.map((k: { checkpointId: string }) => k.checkpointId)).toEqual([c.checkpointId]);
  });

  it('rewind bodies: `to` as a number, array, object, null, boolean, empty; unknown fields; missing path: 400 naming the field, nothing changes', async () => {
    const u = await stack.user();
    await seed(u);
    const before = await tree(u, '/files');
    const cases: [unknown, string][] = [
      [{ path: '/files/w', to: 1714564800000 }, 'to'],
      [{ path: '/files/w', to: [new Date().toISOString()] }, 'to'],
      [{ path: '/files/w', to: { at: new Date().toISOString() } }, 'to'],
      [{ path: '/files/w', to: null }, 'to'],
      [{ path: '/files/w', to: true }, 'to'],
      [{ path: '/files/w', to: '' }, 'to'],
      [{ path: '/files/w' }, 'to'],
      [{ to: new Date().toISOString() }, 'path'],
      [{ path: 7, to: new Date().toISOString() }, 'path'],
      [{ path: '/files/w', to: new Date().toISOString(), recursive: true }, 'recursive'],
      [{ path: '/files/w', to: 'a\ud800' }, 'to'],
    ];
    for (const [body, field] of cases) {
      const res = await u.request('POST', '/v1/agent/files/rewind', body);
      expect(envelope(res, 400, 'INVALID_ARGUMENT').details, JSON.stringify(body)).toEqual({ field });
    }
    for (const at of [5, [], {}, null, '', 'yesterday']) {
      const res = await fork(u, { from: '/files/w', to: '/files/f', at });
      expect(envelope(res, 400, 'INVALID_ARGUMENT').details, JSON.stringify(at)).toEqual({ field: 'at' });
    }
    expect(await tree(u, '/files')).toEqual(before);
    expect(await checkpointIds(u)).toEqual([]);
    await expectSound(u);
  });
});

describe('rewind — odd times', () => {
  it('times: no zone, bad calendar dates, out of range zones → 400 (field to); far past → 410; far future and odd but valid forms → now; `to` answered as sent', async () => {
    const u = await stack.user();
    await seed(u);
    const before = await tree(u, '/files/w');
    const n = Object.keys(before).length;
    const now = new Date();
    const bad = [
      '2024-05-01T12:00:00',
      '2024-05-01',
      '2024-05-01 12:00:00Z',
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-05-01T24:00:00Z',
      '2024-05-01T12:60:00Z',
      '2024-05-01T12:00:60Z',
      '2024-05-01T12:00:00+24:00',
      '2024-05-01T12:00:00+01:60',
      '+275760-09-13T00:00:00.000Z',
      ` ${now.toISOString()}`,
      `${now.toISOString()} `,
      'now',
      'Infinity',
      'NaN',
      '1e999',
    ];
    for (const to of bad) {
      const res = await rewind(u, '/files/w', to);
      expect(envelope(res, 400, 'INVALID_ARGUMENT').details, to).toEqual({ field: 'to' });
    }
    // Valid times older than the retained history (30 days).
    for (const to of ['0000-01-01T00:00:00Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00Z', '2000-02-29T12:00:00+14:00']) {
      const res = await rewind(u, '/files/w', to);
      envelope(res, 410, 'HISTORY_EXPIRED');
      envelope(await fork(u, { from: '/files/w', to: '/files/f', at: to }), 410, 'HISTORY_EXPIRED');
    }
    // Ahead of the clock, or now in other spellings: the tree as it is.
    const later = new Date(Date.now() + 60_000);
    const ahead = [
      '9999-12-31T23:59:59.999Z',
      '9999-12-31T23:59:59.999+23:59',
      `${later.toISOString().slice(0, 19)}.123456789Z`,
      `${later.toISOString().slice(0, 16)}Z`,
      later.toISOString().toLowerCase(),
      later.toISOString().replace('Z', '+00:00'),
      later.toISOString().replace('Z', '-00:00'),
      new Date(later.getTime() + 2 * 3600_000).toISOString().replace('Z', '+0200'),
    ];
    for (const to of ahead) {
      const res = await rewind(u, '/files/w', to);
      expect(res.status, `${to}: ${res.text}`).toBe(200);
      expect(res.body).toEqual({ success: true, path: '/files/w', to, restored: 0, removed: 0, unchanged: n, checkpointId: expect.stringMatching(CKP) });
      expect(await tree(u, '/files/w')).toEqual(before);
      expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${res.body.checkpointId}`)).status).toBe(204);
    }
    await expectSound(u);
  });

  it('year 0 is a leap year in ISO 8601 (proleptic Gregorian): 0000-02-29 is a valid time, older than the history → 410 like 0000-03-01, not 400', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/y/x.txt', 'x');
    const got: Record<string, number[]> = {};
    for (const to of ['0000-03-01T00:00:00Z', '0000-02-29T00:00:00Z', '0400-02-29T00:00:00Z', '0004-02-29T00:00:00Z']) {
      got[to] = [(await rewind(u, '/files/y', to)).status, (await fork(u, { from: '/files/y', to: '/files/f', at: to })).status];
    }
    expect(got).toEqual({ '0000-03-01T00:00:00Z': [410, 410], '0000-02-29T00:00:00Z': [410, 410], '0400-02-29T00:00:00Z': [410, 410], '0004-02-29T00:00:00Z': [410, 410] });
    envelope(await rewind(u, '/files/y', '0000-02-29T00:00:00Z'), 410, 'HISTORY_EXPIRED');
    expect(await checkpointIds(u)).toEqual([]);
  });

  it('the edge of the retained history: 29 days ago is within it (nothing was there then: a fork is 404, a rewind empties the tree), 31 days ago is 410', async () => {
    const u = await stack.user();
    await seed(u);
    const day = 24 * 3600 * 1000;
    const within = new Date(Date.now() - 29 * day).toISOString();
    const beyond = new Date(Date.now() - 31 * day).toISOString();
    envelope(await fork(u, { from: '/files/w', to: '/files/f', at: within }), 404, 'FILE_NOT_FOUND');
    envelope(await fork(u, { from: '/files/w', to: '/files/f', at: beyond }), 410, 'HISTORY_EXPIRED');
    envelope(await rewind(u, '/files/w', beyond), 410, 'HISTORY_EXPIRED');
    const n = Object.keys(await tree(u, '/files/w')).length;
    const res = await rewind(u, '/files/w', within);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ to: within, restored: 0, removed: n, unchanged: 0 });
    expect(await tree(u, '/files/w')).toEqual({});
    await expectSound(u);
  });

  it('a time before the user had any file: everything goes to the trash; the checkpoint it answered gives back every byte; and again', async () => {
    const u = await stack.user();
    const empty = await moment();
    await seed(u, '/files/w');
    await put(stack, u, '/files/top.txt', 'top');
    await u.request('POST', '/v1/agent/files/directories', { path: '/files/w/explicit' });
    const before = await bytesTree(u, '/files');
    const usage = await usageOf(u);
    const res = await rewind(u, '/files', empty);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, path: '/files', to: empty, restored: 0, removed: Object.keys(before).length, unchanged: 0, checkpointId: expect.stringMatching(CKP) });
    expect(await tree(u, '/files')).toEqual({});
    const trash = await u.request('GET', '/v1/agent/files/trash?path=/files&recursive=true');
    expect((trash.body.entries as { path: string }[]).map((e) => e.path).sort()).toEqual(Object.keys(before).sort());
    expect((await usageOf(u)).files.bytes, 'the trash holds the same bytes').toBe(usage.files.bytes);
    await expectSound(u);
    const undo = await rewind(u, '/files', res.body.checkpointId);
    expect(undo.status, undo.text).toBe(200);
    expect(undo.body).toMatchObject({ restored: Object.keys(before).length, removed: 0, unchanged: 0 });
    expect(await bytesTree(u, '/files')).toEqual(before);
    // The undo's own undo empties it again; its undo restores again.
    const again = await rewind(u, '/files', undo.body.checkpointId);
    expect(again.body).toMatchObject({ restored: 0, removed: Object.keys(before).length });
    expect(await tree(u, '/files')).toEqual({});
    expect((await rewind(u, '/files', again.body.checkpointId)).status).toBe(200);
    expect(await bytesTree(u, '/files')).toEqual(before);
    expect((await usageOf(u)).files.bytes).toBe(usage.files.bytes);
    await expectSound(u);
  });
});

describe('rewind — trees', () => {
  it('round trip: after edits, deletes, moves, a file where a folder was and a folder where a file was, rewind and its undo give back the exact bytes of each tree', async () => {
    const u = await stack.user();
    await seed(u);
    await put(stack, u, '/files/outside/o.txt', 'outside');
    const then = await bytesTree(u, '/files/w');
    const outside = await bytesTree(u, '/files/outside');
    const c = await taken(u, '/files/w', 'before the storm');
    expect(c).toMatchObject({ files: Object.keys(then).length, bytes: 2 + 3000 + 1 + 1 + 4 });
    // The storm.
    await put(stack, u, '/files/w/a.txt', 'a-storm');
    expect((await remove(u, '/files/w/sub', { recursive: true })).status).toBe(200);
    await put(stack, u, '/files/w/sub', 'a file where the folder was');
    expect((await remove(u, '/files/w/b.bin')).status).toBe(200);
    await put(stack, u, '/files/w/b.bin/inside.txt', 'a folder where the file was');
    await ok(move(u, '/files/w/same1.txt', '/files/outside/same1.txt'));
    await ok(move(u, '/files/outside/o.txt', '/files/w/o.txt'));
    expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/w/same2.txt.d/empty' })).status).toBe(201);
    const storm = await bytesTree(u, '/files/w');
    const stormOutside = await bytesTree(u, '/files/outside');
    const usage = (await usageOf(u)).files.bytes;
    const res = await rewind(u, '/files/w', c.checkpointId);
    expect(res.status, res.text).toBe(200);
    // then: a, b.bin, sub/c, sub/deep/d, same1, same2; now: a (differs), sub (file), b.bin/inside, o, same2.
    expect(res.body).toMatchObject({ restored: 5, removed: 3, unchanged: 1 });
    expect(await bytesTree(u, '/files/w')).toEqual(then);
    expect(await bytesTree(u, '/files/outside'), 'outside the path nothing moved back').toEqual(stormOutside);
    expect((await usageOf(u)).files.bytes, 'a rewind stores no new bytes').toBe(usage);
    await expectSound(u);
    const undo = await rewind(u, '/files/w', res.body.checkpointId);
    expect(undo.status, undo.text).toBe(200);
    expect(await bytesTree(u, '/files/w')).toEqual(storm);
    const redo = await rewind(u, '/files/w', c.checkpointId);
    expect(redo.status, redo.text).toBe(200);
    expect(await bytesTree(u, '/files/w')).toEqual(then);
    expect(Object.keys(outside)).toEqual(['/files/outside/o.txt']);
    await expectSound(u);
  });

  it('a file above the path (where a folder of then must be), by checkpoint and by time: 409 PATH_CONFLICT, nothing changes, no checkpoint taken', async () => {
    const u = await stack.user();
    await seed(u);
    const c = await taken(u, '/files/w');
    const at = await moment();
    expect((await remove(u, '/files/w', { recursive: true })).status).toBe(200);
    await put(stack, u, '/files/w', 'now a file');
    const before = await tree(u, '/files');
    const count = (await checkpointIds(u)).length;
    for (const to of [c.checkpointId, at]) {
      for (const path of ['/files/w/sub', '/files/w/sub/deep', '/files/w/sub/deep/d.txt']) {
        const res = await rewind(u, path, to);
        envelope(res, 409, 'PATH_CONFLICT');
      }
    }
    expect(await tree(u, '/files')).toEqual(before);
    expect((await checkpointIds(u)).length).toBe(count);
    // Rewinding the file's own path is fine: the file goes to the trash, the folder comes back.
    const res = await rewind(u, '/files/w', c.checkpointId);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ removed: 1 });
    expect(Object.keys(await tree(u, '/files/w')).length).toBe(6);
    await expectSound(u);
  });
});

describe('checkpoints — transport', () => {
  it('wrong methods → 405 with Allow; wrong or missing Content-Type → 415; a body over 1 MiB → 413; all in the envelope, nothing created', async () => {
    const u = await stack.user();
    await seed(u);
    const c = await taken(u, '/files/w');
    for (const [method, path] of [
      ['PUT', `/v1/agent/files/checkpoints/${c.checkpointId}`],
      ['POST', `/v1/agent/files/checkpoints/${c.checkpointId}`],
      ['PATCH', '/v1/agent/files/checkpoints'],
      ['GET', '/v1/agent/files/rewind'],
      ['DELETE', '/v1/agent/files/rewind'],
    ] as const) {
      const res = await u.request(method, path);
      envelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.get('allow'), `${method} ${path}`).toBeTruthy();
    }
    const raw = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, ...headers }, body }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));
    for (const path of ['/v1/agent/files/checkpoints', '/v1/agent/files/rewind']) {
      const body = JSON.stringify(path.endsWith('rewind') ? { path: '/files/w', to: c.checkpointId } : { path: '/files/w' });
      for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}] as Record<string, string>[]) {
        const r = await raw(path, body, headers);
        envelope({ ...r, body: JSON.parse(r.text) }, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const big = await raw(path, JSON.stringify({ path: '/files/w', label: 'x'.repeat(1024 * 1024 + 10) }), { 'content-type': 'application/json' });
      envelope({ ...big, body: JSON.parse(big.text) }, 413, 'PAYLOAD_TOO_LARGE');
      const broken = await raw(path, '{"path": "/files/w", ', { 'content-type': 'application/json' });
      envelope({ ...broken, body: JSON.parse(broken.text) }, 400, 'INVALID_ARGUMENT');
    }
    expect(await checkpointIds(u)).toEqual([c.checkpointId]);
  });

  it('Idempotency-Key on create and on a fork: one checkpoint or fork per key, also sent concurrently; another body → 422; another user\'s same key is theirs alone', async () => {
    const u = await stack.user();
    const other = await stack.user();
    await seed(u);
    await put(stack, other, '/files/w/theirs.txt', 'theirs');
    const key = `ckp-${hex(16)}`;
    const body = { path: '/files/w', label: 'once' };
    const answers = await Promise.all(Array.from({ length: 8 }, () => u.request('POST', '/v1/agent/files/checkpoints', body, { 'idempotency-key': key })));
    no5xx(answers);
    for (const r of answers) expect(r.status, r.text).toBe(201);
    expect(new Set(answers.map((r) => r.body.checkpointId)).size).toBe(1);
    const again = await u.request('POST', '/v1/agent/files/checkpoints', body, { 'idempotency-key': key });
    expect(again.body).toEqual(answers[0]!.body);
    envelope(await u.request('POST', '/v1/agent/files/checkpoints', { ...body, label: 'twice' }, { 'idempotency-key': key }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await checkpointIds(u)).toEqual([answers[0]!.body.checkpointId]);
    // The same key and body from another user: their own checkpoint, of their own tree.
    const theirs = await other.request('POST', '/v1/agent/files/checkpoints', body, { 'idempotency-key': key });
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.body.checkpointId).not.toBe(answers[0]!.body.checkpointId);
    expect(theirs.body).toMatchObject({ files: 1 });
    // A fork with a key: once.
    const c = answers[0]!.body.checkpointId as string;
    await put(stack, u, '/files/w/a.txt', 'after');
    const forkKey = `fork-${hex(16)}`;
    const forks = await Promise.all(Array.from({ length: 6 }, () => u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/fork', at: c }, { 'idempotency-key': forkKey })));
    no5xx(forks);
    for (const r of forks) expect(r.status, r.text).toBe(200);
    expect((await read(u, '/files/fork/a.txt')).body.content).toBe('a1');
    envelope(await u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/fork', at: new Date().toISOString() }, { 'idempotency-key': forkKey }), 422, 'IDEMPOTENCY_KEY_REUSED');
    const listed = (await list(u, '/files')).map((e) => e.path).filter((p) => !p.startsWith('/files/projects'));
    expect(listed).toEqual(['/files/fork', '/files/w']);
    await expectSound(u);
    await expectSound(other);
  });

  it('listing by path: a checkpoint of /files/wx is not "below" /files/w; list answers newest first at or below the path only', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/w/a.txt', 'a');
    await put(stack, u, '/files/wx/b.txt', 'b');
    await put(stack, u, '/files/w x/c.txt', 'c');
    const w = await taken(u, '/files/w');
    const wx = await taken(u, '/files/wx');
    const wsp = await taken(u, '/files/w x');
    const wa = await taken(u, '/files/w/a.txt');
    expect(await checkpointIds(u, '/files/w')).toEqual([wa.checkpointId, w.checkpointId]);
    expect(await checkpointIds(u, '/files/w/')).toEqual([wa.checkpointId, w.checkpointId]);
    expect(await checkpointIds(u, '/files/wx')).toEqual([wx.checkpointId]);
    expect(await checkpointIds(u, '/files/w x')).toEqual([wsp.checkpointId]);
    expect(await checkpointIds(u, '/files/w/a.txt')).toEqual([wa.checkpointId]);
    expect(await checkpointIds(u, '/files/W')).toEqual([]);
    expect(await checkpointIds(u)).toEqual([wa.checkpointId, wsp.checkpointId, wx.checkpointId, w.checkpointId]);
    // A checkpoint of /files/wx does not cover /files/w (nor the other way round).
    expect(envelope(await rewind(u, '/files/w', wx.checkpointId), 400, 'INVALID_ARGUMENT').details).toEqual({ field: 'to' });
    expect(envelope(await rewind(u, '/files/wx', w.checkpointId), 400, 'INVALID_ARGUMENT').details).toEqual({ field: 'to' });
    expect(envelope(await rewind(u, '/files/w x', w.checkpointId), 400, 'INVALID_ARGUMENT').details).toEqual({ field: 'to' });
  });
});

describe('rewind — folders made since', () => {
  for (const by of ['checkpoint', 'time'] as const) {
    it(`by ${by}: explicit nested empty folders, and a folder holding a new file, where files of then were: they go, the files come back, the index is sound`, async () => {
      const u = await stack.user();
      await put(stack, u, '/files/e/one.txt', 'one');
      await put(stack, u, '/files/e/two.txt', 'two');
      await put(stack, u, '/files/e/keep/three.txt', 'three');
      const then = await bytesTree(u, '/files/e');
      const c = await taken(u, '/files/e');
      const at = await moment();
      expect((await remove(u, '/files/e/one.txt')).status).toBe(200);
      expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/e/one.txt/x/y' })).status).toBe(201);
      expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/e/one.txt/z' })).status).toBe(201);
      expect((await remove(u, '/files/e/two.txt')).status).toBe(200);
      expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/e/two.txt' })).status).toBe(201);
      await put(stack, u, '/files/e/two.txt/inner/new.txt', 'new');
      expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/e/two.txt/empty' })).status).toBe(201);
      expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/e/keep/made-since' })).status).toBe(201);
      const res = await rewind(u, '/files/e', by === 'checkpoint' ? c.checkpointId : at);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ restored: 2, removed: 1, unchanged: 1 });
      expect(await bytesTree(u, '/files/e')).toEqual(then);
      const entries = await list(u, '/files/e', { recursive: true });
      for (const p of ['/files/e/one.txt', '/files/e/two.txt']) expect(entries.find((e) => e.path === p)?.type, p).toBe('file');
      expect(entries.some((e) => e.path.startsWith('/files/e/one.txt/') || e.path.startsWith('/files/e/two.txt/'))).toBe(false);
      await expectSound(u);
      // The undo brings back the tree of before the rewind: the folders' file, and the explicit
      // folders made since (empty ones too: folders created explicitly are part of the tree).
      const undo = await rewind(u, '/files/e', res.body.checkpointId);
      expect(undo.status, undo.text).toBe(200);
      expect(undo.body).toMatchObject({ restored: 1, removed: 2, unchanged: 1 });
      expect((await read(u, '/files/e/two.txt/inner/new.txt')).body.content).toBe('new');
      expect((await stat(u, '/files/e/two.txt')), 'the file of then went to the trash again').toBeUndefined();
      for (const p of ['/files/e/one.txt/x/y', '/files/e/one.txt/z', '/files/e/two.txt/empty', '/files/e/keep/made-since']) expect(await list(u, p), p).toEqual([]);
      await expectSound(u);
    });
  }
});

describe('checkpoints — races', () => {
  it('MAX_CHECKPOINTS under concurrency: 20 creates and 5 rewinds at once with 3 places left: exactly 3 succeed, the rest 403 with the figures, never more than the cap', async () => {
    const u = await stack.user();
    await seed(u);
    const first = await taken(u, '/files/w');
    for (let i = 1; i < MAX_CHECKPOINTS - 3; i++) await taken(u, '/files/w', `n${i}`);
    await put(stack, u, '/files/w/a.txt', 'changed');
    const answers = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => checkpoint(u, { path: i % 2 ? '/files/w' : '/files', label: `race ${i}` })),
      ...Array.from({ length: 5 }, () => rewind(u, '/files/w', first.checkpointId)),
    ]);
    no5xx(answers);
    const won = answers.filter((r) => r.status === 201 || r.status === 200);
    expect(won.length).toBe(3);
    for (const r of answers.filter((x) => x.status !== 201 && x.status !== 200)) {
      expect(envelope(r, 403, 'QUOTA_EXCEEDED').details).toEqual({ quota: 'MAX_CHECKPOINTS', limit: MAX_CHECKPOINTS, used: MAX_CHECKPOINTS });
    }
    expect((await checkpointIds(u)).length).toBe(MAX_CHECKPOINTS);
    expect((await usageOf(u)).checkpoints).toMatchObject({ count: MAX_CHECKPOINTS, limit: MAX_CHECKPOINTS });
    const rewound = answers.slice(20).some((r) => r.status === 200);
    expect((await read(u, '/files/w/a.txt')).body.content).toBe(rewound ? 'a1' : 'changed');
    await expectSound(u);
  });

  it('concurrent rewinds of one tree, racing the delete of the checkpoint they name: each 200 or 404, the tree is exactly then or untouched, the index is sound', async () => {
    const u = await stack.user();
    await seed(u);
    const then = await tree(u, '/files/w');
    const c = await taken(u, '/files/w');
    await put(stack, u, '/files/w/a.txt', 'later');
    await put(stack, u, '/files/w/new.txt', 'new');
    expect((await remove(u, '/files/w/sub', { recursive: true })).status).toBe(200);
    const later = await tree(u, '/files/w');
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, () => rewind(u, '/files/w', c.checkpointId)),
      u.request('DELETE', `/v1/agent/files/checkpoints/${c.checkpointId}`),
      ...Array.from({ length: 4 }, () => rewind(u, '/files/w', c.checkpointId)),
      fork(u, { from: '/files/w', to: '/files/fork', at: c.checkpointId }),
    ]);
    no5xx(answers);
    expect(answers[4]!.status, answers[4]!.text).toBe(204);
    const rewinds = [...answers.slice(0, 4), ...answers.slice(5, 9)];
    for (const r of rewinds) if (r.status !== 200) envelope(r, 404, 'CHECKPOINT_NOT_FOUND');
    const done = rewinds.filter((r) => r.status === 200);
    expect(new Set(done.map((r) => r.body.checkpointId)).size).toBe(done.length);
    // The first that ran restores; any later one finds the tree as then.
    if (done.length > 0) {
      expect(await tree(u, '/files/w')).toEqual(then);
      expect(done.filter((r) => r.body.restored > 0 || r.body.removed > 0).length).toBe(1);
      for (const r of done.filter((x) => x.body.restored === 0 && x.body.removed === 0)) expect(r.body.unchanged).toBe(Object.keys(then).length);
    } else {
      expect(await tree(u, '/files/w')).toEqual(later);
    }
    const forked = answers[9]!;
    if (forked.status === 200) expect(Object.keys(await tree(u, '/files/fork')).length).toBe(Object.keys(then).length);
    else envelope(forked, 404, 'CHECKPOINT_NOT_FOUND');
    envelope(await u.request('GET', `/v1/agent/files/checkpoints/${c.checkpointId}`), 404, 'CHECKPOINT_NOT_FOUND');
    envelope(await rewind(u, '/files/w', c.checkpointId), 404, 'CHECKPOINT_NOT_FOUND');
    expect((await checkpointIds(u)).sort()).toEqual(done.map((r) => r.body.checkpointId).sort());
    await expectSound(u);
  });
});

describe('fork — hostile', () => {
  it('fork onto an existing folder or file, below `from`, below a file, onto the root, from the root, with another user\'s `at`: refused with the right code; nothing created, no bytes', async () => {
    const u = await stack.user();
    const other = await stack.user();
    await seed(u);
    await put(stack, u, '/files/taken/x.txt', 'x');
    await put(stack, u, '/files/afile', 'a file');
    const c = await taken(u, '/files/w');
    const at = await moment();
    await put(stack, other, '/files/o/o.txt', 'other');
    const theirs = await taken(other, '/files/o');
    expect((await remove(u, '/files/w', { recursive: true })).status).toBe(200);
    const before = await tree(u, '/files');
    const usage = (await usageOf(u)).files.bytes;
    for (const when of [c.checkpointId, at]) {
      const cases: [Record<string, unknown>, number, string][] = [
        [{ from: '/files/w', to: '/files/taken' }, 409, 'PATH_CONFLICT'],
        [{ from: '/files/w', to: '/files/taken', onConflict: 'overwrite' }, 409, 'PATH_CONFLICT'],
        [{ from: '/files/w', to: '/files/afile' }, 409, 'PATH_CONFLICT'],
        [{ from: '/files/w/a.txt', to: '/files/afile' }, 409, 'FILE_EXISTS'],
        [{ from: '/files/w/a.txt', to: '/files/taken' }, 409, 'PATH_CONFLICT'],
        [{ from: '/files/w', to: '/files/afile/below' }, 409, 'PATH_CONFLICT'],
        [{ from: '/files/w', to: '/files/w/inside' }, 400, 'INVALID_PATH'],
        [{ from: '/files/w', to: '/files/w' }, 400, 'INVALID_PATH'],
        [{ from: '/files/w/a.txt', to: '/files/w/a.txt/x' }, 400, 'INVALID_PATH'],
        [{ from: '/files/w', to: '/files' }, 400, 'INVALID_PATH'],
        [{ from: '/files', to: '/files/all' }, 400, 'INVALID_PATH'],
        [{ from: '/files/w/nothing', to: '/files/n' }, 404, 'FILE_NOT_FOUND'],
        [{ from: '/files/w/../w', to: '/files/n' }, 400, 'INVALID_PATH'],
      ];
      for (const [body, status, code] of cases) {
        const res = await fork(u, { ...body, at: when });
        envelope(res, status, code);
        if (code === 'FILE_EXISTS') expect(res.body.error.details).toEqual({ path: '/files/afile' });
      }
    }
    envelope(await fork(u, { from: '/files/w', to: '/files/stolen', at: theirs.checkpointId }), 404, 'CHECKPOINT_NOT_FOUND');
    envelope(await fork(u, { from: '/files/o', to: '/files/stolen', at: theirs.checkpointId }), 404, 'CHECKPOINT_NOT_FOUND');
    envelope(await u.request('POST', '/v1/agent/files/move', { from: '/files/w', to: '/files/m', at: c.checkpointId }), 400, 'INVALID_ARGUMENT');
    expect(await tree(u, '/files')).toEqual(before);
    expect((await usageOf(u)).files.bytes).toBe(usage);
    // What works: a file onto a file with overwrite and uuid, a folder into a new place, by a checkpoint and by a time.
    expect((await fork(u, { from: '/files/w/a.txt', to: '/files/afile', onConflict: 'overwrite', at: c.checkpointId })).status).toBe(200);
    expect((await read(u, '/files/afile')).body.content).toBe('a1');
    const uuid = await fork(u, { from: '/files/w/a.txt', to: '/files/afile', onConflict: 'uuid', at });
    expect(uuid.status, uuid.text).toBe(200);
    expect(uuid.body.path).not.toBe('/files/afile');
    expect((await read(u, uuid.body.path)).body.content).toBe('a1');
    for (const [to, when] of [['/files/f1', c.checkpointId], ['/files/deep/er/f2', at]] as const) {
      const res = await fork(u, { from: '/files/w/sub', to, at: when });
      expect(res.status, res.text).toBe(200);
      expect(await tree(u, to)).toEqual({ [`${to}/c.txt`]: sha256('c'), [`${to}/deep/d.txt`]: sha256('d') });
    }
    expect((await usageOf(u)).files.bytes, 'forks store no bytes').toBe(usage);
    expect(await tree(other, '/files/o')).toEqual({ '/files/o/o.txt': sha256('other') });
    expect(Object.keys(await tree(other, '/files')).filter((p) => !p.startsWith('/files/projects/'))).toEqual(['/files/o/o.txt']);
    await expectSound(u);
    await expectSound(other);
  });
});

describe('checkpoints — accounting', () => {
  it('permanent delete under a checkpoint, rewind, fork, then everything deleted: usage equals the audit at each step and ends at zero, the store empties', async () => {
    const u = await stack.user();
    // What the user has before (the Home project's files, made on first use) stays throughout.
    await usageOf(u);
    for (let i = 0; i < 50 && Object.keys(await tree(u, '/files/projects')).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const base = (await usageOf(u)).files;
    const baseObjects = await storedObjects(stack, u);
    const big = randomBytes(20_000);
    await put(stack, u, '/files/acc/big.bin', big);
    await put(stack, u, '/files/acc/small.txt', 'small');
    await put(stack, u, '/files/acc/copy.bin', big);
    const then = await bytesTree(u, '/files/acc');
    const c = await taken(u, '/files/acc');
    expect(c.bytes).toBe(20_000 + 5);
    expect((await usageOf(u)).checkpoints).toMatchObject({ count: 1, bytes: 20_005 });
    expect((await remove(u, '/files/acc', { recursive: true, permanent: true })).status).toBe(200);
    expect(await tree(u, '/files/acc')).toEqual({});
    expect((await usageOf(u)).files.bytes, 'the checkpoint still holds the bytes').toBe(base.bytes + 20_005);
    await expectSound(u);
    const res = await rewind(u, '/files/acc', c.checkpointId);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ restored: 3, removed: 0, unchanged: 0 });
    expect(await bytesTree(u, '/files/acc')).toEqual(then);
    const f = await fork(u, { from: '/files/acc', to: '/files/acc-fork', at: c.checkpointId });
    expect(f.status, f.text).toBe(200);
    expect((await usageOf(u)).files.bytes).toBe(base.bytes + 20_005);
    await expectSound(u);
    // Everything goes: the checkpoints, then the files and their histories.
    for (const id of await checkpointIds(u)) expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${id}`)).status).toBe(204);
    expect((await usageOf(u)).checkpoints).toMatchObject({ count: 0, bytes: 0 });
    expect((await usageOf(u)).files.bytes).toBe(base.bytes + 20_005);
    for (const p of ['/files/acc', '/files/acc-fork']) expect((await remove(u, p, { recursive: true, permanent: true })).status).toBe(200);
    await expectSound(u);
    expect((await usageOf(u)).files).toMatchObject({ count: base.count, bytes: base.bytes });
    await expect.poll(async () => storedObjects(stack, u), { timeout: 30_000, interval: 500 }).toEqual(baseObjects);
  });
});

describe('checkpoints — byte quota', () => {
  it('bytes only a checkpoint holds still count toward FILE_QUOTA_BYTES; a rewind or fork at the quota adds none and succeeds; deleting the checkpoint frees them', async () => {
    const u = await stack.user();
    await usageOf(u);
    for (let i = 0; i < 50 && Object.keys(await tree(u, '/files/projects')).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const base = (await usageOf(u)).files.bytes;
    const a = randomBytes(60_000);
    const b = randomBytes(45_000);
    await put(stack, u, '/files/q/a.bin', a);
    const c = await taken(u, '/files/q');
    expect((await remove(u, '/files/q', { recursive: true, permanent: true })).status).toBe(200);
    expect((await usageOf(u)).files.bytes).toBe(base + 60_000);
    const refused = await upload(u, '/files/q/b.bin', b);
    expect(envelope(refused, 403, 'QUOTA_EXCEEDED').details).toEqual({ quota: 'FILE_QUOTA_BYTES', limit: QUOTA, used: base + 60_000 });
    expect(await tree(u, '/files/q')).toEqual({});
    const back = await rewind(u, '/files/q', c.checkpointId);
    expect(back.status, back.text).toBe(200);
    expect((await download(stack.url, u, '/files/q/a.bin')).sha256).toBe(sha256(a));
    const f = await fork(u, { from: '/files/q', to: '/files/q2', at: c.checkpointId });
    expect(f.status, f.text).toBe(200);
    const t = await fork(u, { from: '/files/q/a.bin', to: '/files/q3.bin', at: new Date().toISOString() });
    expect(t.status, t.text).toBe(200);
    expect((await usageOf(u)).files.bytes).toBe(base + 60_000);
    await expectSound(u);
    for (const id of await checkpointIds(u)) expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${id}`)).status).toBe(204);
    for (const p of ['/files/q', '/files/q2', '/files/q3.bin']) expect((await remove(u, p, { recursive: true, permanent: true })).status, p).toBe(200);
    expect((await usageOf(u)).files.bytes).toBe(base);
    expect((await upload(u, '/files/q/b.bin', b)).status).toBe(200);
    await expectSound(u);
  });
});

describe('checkpoints — MCP tools', () => {
  it('create_checkpoint and rewind with bad arguments: tool errors with the API code or -32602, never -32603 or a 5xx; good ones round-trip', async () => {
    const u = await stack.user();
    const other = await stack.user();
    await seed(u);
    const theirs = await taken(other, '/files');
    const sid = await mcpOpen(u);
    const before = await tree(u, '/files');
    const inW = Object.keys(await tree(u, '/files/w')).length;
    const cases: [string, unknown, string | undefined][] = [
      ['create_checkpoint', { label: 5 }, 'INVALID_ARGUMENT'],
      ['create_checkpoint', { path: 5 }, 'INVALID_ARGUMENT'],
      ['create_checkpoint', { path: '/etc/passwd' }, 'INVALID_PATH'],
      ['create_checkpoint', { path: '/files/w/../..' }, 'INVALID_PATH'],
      ['create_checkpoint', { path: '/files/nothing' }, 'FILE_NOT_FOUND'],
      ['create_checkpoint', { label: 'x'.repeat(201) }, 'INVALID_ARGUMENT'],
      ['create_checkpoint', { extra: 1 }, 'INVALID_ARGUMENT'],
      ['create_checkpoint', ['/files'], 'INVALID_ARGUMENT'],
      ['rewind', {}, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w' }, 'INVALID_ARGUMENT'],
      ['rewind', { to: new Date().toISOString() }, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w', to: 5 }, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w', to: '' }, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w', to: 'yesterday' }, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w', to: '2024-02-30T00:00:00Z' }, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w', to: '2001-01-01T00:00:00Z' }, 'HISTORY_EXPIRED'],
      ['rewind', { path: '/files/w', to: theirs.checkpointId }, 'CHECKPOINT_NOT_FOUND'],
      ['rewind', { path: '/files/w', to: `ckp_${hex(33)}` }, 'CHECKPOINT_NOT_FOUND'],
      ['rewind', { path: '/files/w', to: `ckp_${'a'.repeat(10_000)}` }, undefined],
      ['rewind', { path: '/files/w', to: `${'9'.repeat(50_000)}` }, 'INVALID_ARGUMENT'],
      ['rewind', { path: '/files/w/a.txt/x', to: new Date().toISOString() }, 'PATH_CONFLICT'],
      ['rewind', { path: '/files\u0000', to: new Date().toISOString() }, 'INVALID_PATH'],
    ];
    for (const [name, args, code] of cases) {
      const res = await mcpSend(u, sid, toolCall(name, args));
      const what = `${name} ${JSON.stringify(args).slice(0, 80)}: ${JSON.stringify(res.body).slice(0, 400)}`;
      expect(res.status, what).toBe(200);
      if (res.body.error) {
        expect(res.body.error.code, what).toBe(-32602);
        expect(code === undefined || code === 'INVALID_ARGUMENT', what).toBe(true);
      } else {
        expect(res.body.result.isError, what).toBe(true);
        const e = res.body.result.structuredContent.error;
        if (code === undefined) expect(['CHECKPOINT_NOT_FOUND', 'INVALID_ARGUMENT'], what).toContain(e.code);
        else expect(e.code, what).toBe(code);
        expect(JSON.stringify(res.body), what).not.toMatch(/lua|redis|grpc|127\.0\.0\.1|at .*\.js:\d+/i);
      }
    }
    expect(await tree(u, '/files')).toEqual(before);
    expect(await checkpointIds(u)).toEqual([]);
    // Good ones: a checkpoint by MCP, changes, a rewind by MCP, the undo by HTTP.
    const made = await mcpSend(u, sid, toolCall('create_checkpoint', { path: '/files/w', label: 'by mcp' }));
    expect(made.body.result?.isError, JSON.stringify(made.body)).toBeFalsy();
    const ckp = made.body.result.structuredContent;
    expect(ckp).toMatchObject({ checkpointId: expect.stringMatching(CKP), path: '/files/w', label: 'by mcp', files: inW });
    expect((await u.request('GET', `/v1/agent/files/checkpoints/${ckp.checkpointId}`)).body).toEqual(ckp);
    await put(stack, u, '/files/w/a.txt', 'changed by an agent');
    const changed = await tree(u, '/files');
    const back = await mcpSend(u, sid, toolCall('rewind', { path: '/files/w', to: ckp.checkpointId }));
    expect(back.body.result?.isError, JSON.stringify(back.body)).toBeFalsy();
    expect(back.body.result.structuredContent).toEqual({ success: true, path: '/files/w', to: ckp.checkpointId, restored: 1, removed: 0, unchanged: inW - 1, checkpointId: expect.stringMatching(CKP) });
    expect(await tree(u, '/files')).toEqual(before);
    expect((await rewind(u, '/files/w', back.body.result.structuredContent.checkpointId)).status).toBe(200);
    expect(await tree(u, '/files')).toEqual(changed);
    // The cap holds over MCP too.
    while ((await checkpointIds(u)).length < MAX_CHECKPOINTS) await taken(u, '/files/w');
    const over = await mcpSend(u, sid, toolCall('create_checkpoint', {}));
    expect(over.body.result, JSON.stringify(over.body)).toMatchObject({ isError: true, structuredContent: { error: { code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_CHECKPOINTS' } } } });
    const overRewind = await mcpSend(u, sid, toolCall('rewind', { path: '/files/w', to: ckp.checkpointId }));
    expect(overRewind.body.result, JSON.stringify(overRewind.body)).toMatchObject({ isError: true, structuredContent: { error: { code: 'QUOTA_EXCEEDED' } } });
    expect(await tree(u, '/files')).toEqual(changed);
    await expectSound(u);
  });
});

/* MCP over raw JSON-RPC (test/mcp-hostile.e2e.test.ts), to see exactly what the server answers. */

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const toolCall = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON-RPC bodies of any shape
async function mcpSend(u: ApiUser, sessionId: string, payload: unknown): Promise<{ status: number; body: any }> {
  const res = await mcpPost(stack.url, payload, { authorization: `Bearer ${u.token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // An SSE answer: the data of its message event.
    const data = text.split('\n').find((l) => l.startsWith('data: '));
    body = data ? JSON.parse(data.slice(6)) : { raw: text };
  }
  return { status: res.status, body };
}

async function mcpOpen(u: ApiUser): Promise<string> {
  const res = await mcpPost(stack.url, INIT, { authorization: `Bearer ${u.token}` });
  expect(res.status).toBe(200);
  await res.text();
  const sid = res.headers.get('mcp-session-id')!;
  await mcpPost(stack.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { authorization: `Bearer ${u.token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  return sid;
}
