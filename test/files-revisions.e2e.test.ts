import { readEvents, tenantKey } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client, testNats, testRedis } from './support/backends.js';
import { q, upload } from './support/files.js';
import { buildTree, download, ISO_MS, list, put, read, sha256, stat, type Downloaded } from './support/files-api.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  // Three records per path, and unreferenced bytes go at the next sweep: what must stay is what
  // the kept revisions and the trash reference.
  stack = await startStack({ filesEnv: { FILE_REVISIONS: '3', FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500' } });
});
afterAll(async () => {
  await stack?.stop();
});

const REV = /^rev_[0-9a-f]{32}$/;

const revisionsOf = (u: ApiUser, path: string) => u.request('GET', `/v1/agent/files/revisions?path=${q(path)}`);
const trashOf = (u: ApiUser, path: string, recursive = false) => u.request('GET', `/v1/agent/files/trash?path=${q(path)}&recursive=${recursive}`);
const restore = (u: ApiUser, body: Record<string, unknown>) => u.request('POST', '/v1/agent/files/restore', body);
const remove = (u: ApiUser, path: string, recursive = false) => u.request('DELETE', `/v1/agent/files?path=${q(path)}&recursive=${recursive}`);

/** Downloads one revision of a path. */
/** The keys of the objects under `prefix` in the bucket. */
async function objectsUnder(s3: ReturnType<typeof s3Client>, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of s3.listObjectsV2(bucket, prefix, true) as AsyncIterable<{ name?: string }>) if (o.name) keys.push(o.name);
  return keys;
}

async function downloadAt(u: ApiUser, path: string, revision: string, headers: Record<string, string> = {}): Promise<Downloaded> {
  const res = await fetch(`${stack.url}/v1/agent/files/download?path=${q(path)}&revision=${q(revision)}`, { headers: { authorization: `Bearer ${u.token}`, ...headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, sha256: sha256(bytes) };
}

async function revisions(u: ApiUser, path: string): Promise<{ revision: string; deleted: boolean; modifiedAt: string; size?: number; sha256?: string; mimeType?: string }[]> {
  const res = await revisionsOf(u, path);
  expect(res.status, res.text).toBe(200);
  expect(res.body.path).toBe(path);
  return res.body.revisions;
}

describe('files — revisions', () => {
  it('revisions — overwrite then restore: the bytes come back identical by sha256, as a new revision', async () => {
    const u = await stack.user();
    const good = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251));
    const first = await put(stack, u, '/files/data/report.bin', good);
    await put(stack, u, '/files/data/report.bin', 'overwritten by an agent\n');
    const before = await revisions(u, '/files/data/report.bin');
    expect(before).toHaveLength(2);
    expect(before[1]).toEqual({ revision: expect.stringMatching(REV), deleted: false, modifiedAt: expect.stringMatching(ISO_MS), size: good.length, sha256: first.sha256, mimeType: 'application/octet-stream' });
    expect(before[0]!.sha256).toBe(sha256('overwritten by an agent\n'));
    // The old revision downloads whole (and in a range) while the file holds other bytes.
    const old = await downloadAt(u, '/files/data/report.bin', before[1]!.revision);
    expect(old.status).toBe(200);
    expect(old.sha256).toBe(first.sha256);
    expect(old.headers.get('etag')).toBe(`"${first.sha256}"`);
    const ranged = await downloadAt(u, '/files/data/report.bin', before[1]!.revision, { range: 'bytes=10-19' });
    expect(ranged.status).toBe(206);
    expect(ranged.bytes).toEqual(good.subarray(10, 20));
    const res = await restore(u, { path: '/files/data/report.bin', revision: before[1]!.revision });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, path: '/files/data/report.bin', size: good.length, mimeType: 'application/octet-stream', sha256: first.sha256, revision: expect.stringMatching(REV) });
    expect(res.body.revision).not.toBe(before[1]!.revision);
    const now = await download(stack.url, u, '/files/data/report.bin');
    expect(now.sha256).toBe(first.sha256);
    expect(now.bytes.equals(good)).toBe(true);
    const after = await revisions(u, '/files/data/report.bin');
    expect(after.map((r) => r.revision)).toEqual([res.body.revision, before[0]!.revision, before[1]!.revision]);
  });

  it('revisions — read takes a revision; a delete is a deletion; the list answers for a deleted file', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/notes.md', '# one\n');
    await put(stack, u, '/files/notes.md', '# two\n');
    expect((await remove(u, '/files/notes.md')).status).toBe(200);
    const revs = await revisions(u, '/files/notes.md');
    expect(revs.map((r) => r.deleted)).toEqual([true, false, false]);
    expect(Object.keys(revs[0]!).sort()).toEqual(['deleted', 'modifiedAt', 'revision']);
    expect(revs[0]!.modifiedAt).toMatch(ISO_MS);
    expect(revs[1]).toMatchObject({ mimeType: 'text/markdown', size: 6 });
    const one = await u.request('GET', `/v1/agent/files/read?path=/files/notes.md&revision=${revs[2]!.revision}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({ path: '/files/notes.md', content: '# one\n', encoding: 'utf-8' });
    expect((await read(u, '/files/notes.md')).status, 'the file itself is gone').toBe(404);
  });

  it('revisions — 404 REVISION_NOT_FOUND for a revision that is not the path\'s; 404 FILE_NOT_FOUND for a path that never held a file; invisible to others', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/a.txt', 'a');
    await put(stack, u, '/files/b.txt', 'b');
    const [ofB] = await revisions(u, '/files/b.txt');
    for (const revision of [ofB!.revision, `rev_${'0'.repeat(32)}`, 'nope']) {
      for (const route of ['read', 'download']) {
        const res = await u.request('GET', `/v1/agent/files/${route}?path=/files/a.txt&revision=${q(revision)}`);
        expect(res.status, `${route} ${revision}`).toBe(404);
        expect(res.body.error.code).toBe('REVISION_NOT_FOUND');
      }
      const res = await restore(u, { path: '/files/a.txt', revision });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('REVISION_NOT_FOUND');
    }
    const never = await revisionsOf(u, '/files/never.txt');
    expect(never.status).toBe(404);
    expect(never.body.error.code).toBe('FILE_NOT_FOUND');
    expect((await revisionsOf(u, '/files/../x')).body.error.code).toBe('INVALID_PATH');
    const other = await stack.user();
    expect((await revisionsOf(other, '/files/a.txt')).status).toBe(404);
    expect((await other.request('GET', `/v1/agent/files/read?path=/files/b.txt&revision=${ofB!.revision}`)).body.error.code).toBe('REVISION_NOT_FOUND');
    expect((await restore(other, { path: '/files/b.txt', revision: ofB!.revision })).status).toBe(404);
  });

  it('trash — deleted files whose path holds no file, directly in a path or below it, newest deletion first', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/t/first.md', 'first');
    await put(stack, u, '/files/t/dir/a.txt', 'a');
    await put(stack, u, '/files/t/dir/sub/b.txt', 'bb');
    await put(stack, u, '/files/t/stays.txt', 'stays');
    expect((await remove(u, '/files/t/first.md')).status).toBe(200);
    expect((await remove(u, '/files/t/dir', true)).status).toBe(200);
    const direct = await trashOf(u, '/files/t');
    expect(direct.status, direct.text).toBe(200);
    const [lastRev] = await revisions(u, '/files/t/first.md').then((r) => r.slice(1));
    expect(direct.body).toEqual({
      path: '/files/t',
      recursive: false,
      entries: [{ path: '/files/t/first.md', name: 'first.md', size: 5, sha256: sha256('first'), mimeType: 'text/markdown', deletedAt: expect.stringMatching(ISO_MS), revision: lastRev!.revision }],
    });
    const all = await trashOf(u, '/files', true);
    expect(all.body.entries.map((e: { path: string }) => e.path)).toEqual(['/files/t/dir/a.txt', '/files/t/dir/sub/b.txt', '/files/t/first.md']);
    expect((await u.request('GET', '/v1/agent/files/trash')).body).toEqual({ path: '/files', recursive: false, entries: [] });
    expect((await trashOf(u, '/files/nowhere', true)).body.entries).toEqual([]);
    expect((await u.request('GET', '/v1/agent/files/trash?path=/files&recursive=maybe')).status).toBe(400);
    // Writing the path again takes it out of the trash.
    await put(stack, u, '/files/t/first.md', 'again');
    expect((await trashOf(u, '/files', true)).body.entries.map((e: { path: string }) => e.path)).toEqual(['/files/t/dir/a.txt', '/files/t/dir/sub/b.txt']);
  });

  it('restore — a trashed file by its revision; 409 PATH_CONFLICT for a directory at the path or a file above it; 400 for a bad body', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/r/x.md', 'x');
    expect((await remove(u, '/files/r/x.md')).status).toBe(200);
    const [entry] = (await trashOf(u, '/files/r')).body.entries;
    await put(stack, u, '/files/r/x.md/now-a-folder.txt', 'blocks');
    const blocked = await restore(u, { path: '/files/r/x.md', revision: entry.revision });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/r/x.md' } });
    expect((await remove(u, '/files/r', true)).status).toBe(200);
    await put(stack, u, '/files/r', 'a file above');
    const above = await restore(u, { path: '/files/r/x.md', revision: entry.revision });
    expect(above.status).toBe(409);
    expect(above.body.error).toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/r' } });
    const tree = await restore(u, { path: '/files/r', recursive: true });
    expect(tree.status, 'a recursive restore below a file').toBe(409);
    expect((await remove(u, '/files/r')).status).toBe(200);
    const ok = await restore(u, { path: '/files/r/x.md', revision: entry.revision });
    expect(ok.status, ok.text).toBe(200);
    expect((await read(u, '/files/r/x.md')).body.content).toBe('x');
    for (const body of [{ path: '/files/r/x.md' }, { path: '/files/r', recursive: true, revision: entry.revision }, { path: '/files/r', recursive: 'yes' }, { path: '/files/r/x.md', revision: entry.revision, extra: 1 }]) {
      const res = await restore(u, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_ARGUMENT');
    }
    expect((await restore(u, { path: '/files', revision: entry.revision })).body.error.code).toBe('INVALID_PATH');
    expect((await restore(u, { path: 'files/r', recursive: true })).body.error.code).toBe('INVALID_PATH');
  });

  it('restore — a recursive delete of 1,000 files undone in one call: the same tree and bytes, one change, one event', async () => {
    const u = await stack.user();
    const built = await buildTree(stack, u, '/files/big', 125, 3);
    expect(built.files.size).toBe(1_000);
    const before = await list(u, '/files/big', { recursive: true });
    await put(stack, u, '/files/elsewhere.txt', 'not below /files/big');
    expect((await remove(u, '/files/big', true)).status).toBe(200);
    expect((await remove(u, '/files/elsewhere.txt')).status).toBe(200);
    expect((await trashOf(u, '/files/big', true)).body.entries).toHaveLength(1_000);
    const cursor = (await u.request('GET', '/v1/agent/files/changes/cursor?path=/files')).body.cursor;
    const since = new Date(Date.now() - 1_000);
    const res = await restore(u, { path: '/files/big', recursive: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, path: '/files/big', restored: 1_000 });
    const after = await list(u, '/files/big', { recursive: true });
    expect(after.map((e) => [e.path, e.type, e.size, e.sha256])).toEqual(before.map((e) => [e.path, e.type, e.size, e.sha256]));
    for (const [rel, sha] of built.files) expect(after.find((e) => e.path === `/files/big/${rel}`)?.sha256, rel).toBe(sha);
    const one = [...built.files.keys()][421]!;
    expect((await read(u, `/files/big/${one}`)).body.content).toMatch(/^seed \d+ of \/files\/big\n$/);
    const changes = await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`);
    expect(changes.body.changes).toEqual([{ type: 'created', kind: 'directory', path: '/files/big', at: expect.stringMatching(ISO_MS) }]);
    expect((await trashOf(u, '/files', true)).body.entries.map((e: { path: string }) => e.path)).toEqual(['/files/elsewhere.txt']);
    const again = await restore(u, { path: '/files/big', recursive: true });
    expect(again.body).toEqual({ success: true, path: '/files/big', restored: 0 });
    const nats = await testNats();
    try {
      const mine = async () => (await readEvents(nats, { subject: 'files.>', since })).filter((e) => e.data.userId === u.sub && e.type === 'file.created' && (e.data as { path: string }).path === '/files/big');
      await expect.poll(async () => (await mine()).length, { timeout: 10_000, interval: 200 }).toBe(1);
      expect((await mine())[0]!.data).toEqual({ userId: u.sub, path: '/files/big', kind: 'directory' });
    } finally {
      await nats.close();
    }
  }, 120_000);

  it('restore — one file shows in the changes feed and as an event (updated when a file is there, created when it was deleted)', async () => {
    const u = await stack.user();
    const since = new Date(Date.now() - 1_000);
    await put(stack, u, '/files/ev/e.md', 'one');
    await put(stack, u, '/files/ev/e.md', 'two');
    const [, first] = await revisions(u, '/files/ev/e.md');
    const cursor = (await u.request('GET', '/v1/agent/files/changes/cursor?path=/files/ev')).body.cursor;
    expect((await restore(u, { path: '/files/ev/e.md', revision: first!.revision })).status).toBe(200);
    expect((await remove(u, '/files/ev/e.md')).status).toBe(200);
    // With FILE_REVISIONS=3 the first revision is gone by now; the trash names the last content.
    expect((await restore(u, { path: '/files/ev/e.md', revision: first!.revision })).body.error.code).toBe('REVISION_NOT_FOUND');
    const [trashed] = (await trashOf(u, '/files/ev')).body.entries;
    expect((await restore(u, { path: '/files/ev/e.md', revision: trashed.revision })).status).toBe(200);
    const changes = await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`);
    expect(changes.body.changes.map((c: { type: string; path: string; sha256?: string }) => [c.type, c.path, c.sha256])).toEqual([
      ['updated', '/files/ev/e.md', sha256('one')],
      ['deleted', '/files/ev/e.md', undefined],
      ['created', '/files/ev/e.md', sha256('one')],
    ]);
    const nats = await testNats();
    try {
      // Only this test's folder: the user's Home context file is written on their first request.
      const mine = async () => (await readEvents(nats, { subject: 'files.>', since })).filter((e) => e.data.userId === u.sub && (e.data as { path: string }).path.startsWith('/files/ev'));
      await expect.poll(async () => (await mine()).length, { timeout: 10_000, interval: 200 }).toBe(5);
      expect((await mine()).map((e) => [e.type, e.data])).toEqual([
        ['file.created', { userId: u.sub, path: '/files/ev/e.md', kind: 'file', size: 3, sha256: sha256('one') }],
        ['file.updated', { userId: u.sub, path: '/files/ev/e.md', kind: 'file', size: 3, sha256: sha256('two') }],
        ['file.updated', { userId: u.sub, path: '/files/ev/e.md', kind: 'file', size: 3, sha256: sha256('one') }],
        ['file.deleted', { userId: u.sub, path: '/files/ev/e.md', kind: 'file' }],
        ['file.created', { userId: u.sub, path: '/files/ev/e.md', kind: 'file', size: 3, sha256: sha256('one') }],
      ]);
    } finally {
      await nats.close();
    }
  });

  it('permanent delete — the file, its revisions and its trash go at once; its bytes leave the store within a minute', async () => {
    const u = await stack.user();
    const s3 = s3Client();
    const bucket = stack.services.files!.env.S3_BUCKET!;
    const prefix = `b/${tenantKey(u.sub)}/`;
    const stored = () => objectsUnder(s3, bucket, prefix);
    expect((await u.request('GET', '/v1/agent/files')).status).toBe(200);
    const base = (await stored()).length;
    await put(stack, u, '/files/pd/secret.txt', 'one');
    await put(stack, u, '/files/pd/secret.txt', 'two');
    await put(stack, u, '/files/pd/old/a.txt', 'a');
    expect((await remove(u, '/files/pd/old', true)).status).toBe(200);
    expect(await stored()).toHaveLength(base + 3);
    const [, first] = await revisions(u, '/files/pd/secret.txt');
    const res = await u.request('DELETE', '/v1/agent/files?path=/files/pd/secret.txt&permanent=true');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, path: '/files/pd/secret.txt' });
    expect((await revisionsOf(u, '/files/pd/secret.txt')).status).toBe(404);
    expect((await u.request('GET', `/v1/agent/files/read?path=/files/pd/secret.txt&revision=${first!.revision}`)).body.error.code).toBe('REVISION_NOT_FOUND');
    expect((await trashOf(u, '/files/pd', true)).body.entries.map((e: { path: string }) => e.path)).toEqual(['/files/pd/old/a.txt']);
    // A folder only in the trash needs recursive=true.
    const folder = await u.request('DELETE', '/v1/agent/files?path=/files/pd/old&permanent=true');
    expect(folder.status).toBe(409);
    expect(folder.body.error.code).toBe('DIRECTORY_NOT_EMPTY');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/pd/old&permanent=true&recursive=true')).status).toBe(200);
    expect((await trashOf(u, '/files', true)).body.entries).toEqual([]);
    await expect.poll(async () => (await stored()).length, { timeout: 60_000, interval: 500 }).toBe(base);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/pd/old&permanent=true&recursive=true')).status).toBe(404);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/pd/x&permanent=maybe')).status).toBe(400);
  }, 90_000);

  it('sweeper — FILE_REVISIONS records per path; the bytes of trimmed ones leave the bucket, every kept revision and trashed file still reads', async () => {
    const u = await stack.user();
    const bucket = stack.services.files!.env.S3_BUCKET!;
    const redis = testRedis('revisions-sweep');
    const s3 = s3Client();
    const prefix = `b/${tenantKey(u.sub)}/`;
    const stored = async () => (await objectsUnder(s3, bucket, prefix)).sort();
    const referenced = async () => (await redis.hkeys(`{u:${tenantKey(u.sub)}}:fs:${bucket}:refs`)).sort();
    try {
      // The first request writes the Home context file; then each upload adds one object.
      expect((await u.request('GET', '/v1/agent/files')).status).toBe(200);
      const base = await stored();
      const added: string[] = [];
      for (let i = 1; i <= 5; i++) {
        const before = await stored();
        await put(stack, u, '/files/s/v.txt', `version ${i}`);
        added.push(...(await stored()).filter((k) => !before.includes(k)));
      }
      expect(added).toHaveLength(5);
      await put(stack, u, '/files/s/gone.txt', 'gone');
      expect((await remove(u, '/files/s/gone.txt')).status).toBe(200);
      const kept = await revisions(u, '/files/s/v.txt');
      expect(kept.map((r) => r.sha256)).toEqual([sha256('version 5'), sha256('version 4'), sha256('version 3')]);
      // Versions 1 and 2 are no revision any more: their objects go; nothing else does.
      await expect.poll(async () => (await stored()).filter((k) => k === added[0] || k === added[1]), { timeout: 30_000, interval: 500 }).toEqual([]);
      expect(await stored()).toHaveLength(base.length + 3 + 1);
      expect(await stored()).toEqual(await referenced());
    } finally {
      await redis.quit();
    }
    for (const r of await revisions(u, '/files/s/v.txt')) {
      const got = await downloadAt(u, '/files/s/v.txt', r.revision);
      expect(got.status).toBe(200);
      expect(got.sha256).toBe(r.sha256);
    }
    const [trashed] = (await trashOf(u, '/files/s')).body.entries;
    expect((await u.request('GET', `/v1/agent/files/read?path=/files/s/gone.txt&revision=${trashed.revision}`)).body.content).toBe('gone');
    expect(await stat(u, '/files/s/gone.txt')).toBeUndefined();
  }, 60_000);
});

describe('files — retention (FILE_REVISION_DAYS) and the byte quota (FILE_QUOTA_BYTES)', () => {
  let aged: Stack;
  /** 0.0001 days: 8.64 s. */
  const RETENTION_MS = 8_640;
  const QUOTA = 8_192;
  beforeAll(async () => {
    aged = await startStack({
      filesEnv: { FILE_REVISION_DAYS: '0.0001', FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500', FILE_QUOTA_BYTES: String(QUOTA) },
      gatewayEnv: { MAX_CONCURRENT_UPLOADS: '32' },
    });
  });
  afterAll(async () => {
    await aged?.stop();
  });

  it('retention — old revisions and the trash go after the retention period, with their bytes; the current file stays', async () => {
    const u = await aged.user();
    const s3 = s3Client();
    const bucket = aged.services.files!.env.S3_BUCKET!;
    const prefix = `b/${tenantKey(u.sub)}/`;
    const stored = () => objectsUnder(s3, bucket, prefix);
    expect((await u.request('GET', '/v1/agent/files')).status).toBe(200);
    const base = (await stored()).length;
    await put(aged, u, '/files/keep.txt', 'v1');
    await put(aged, u, '/files/keep.txt', 'v2');
    await put(aged, u, '/files/gone.txt', 'gone');
    const started = Date.now();
    expect((await remove(u, '/files/gone.txt')).status).toBe(200);
    const listed = async (path: string) => {
      const res = await u.request('GET', `/v1/agent/files/revisions?path=${q(path)}`);
      return res.status === 200 ? res.body.revisions.length : res.status;
    };
    expect(await listed('/files/keep.txt')).toBe(2);
    expect((await u.request('GET', '/v1/agent/files/trash')).body.entries).toHaveLength(1);
    await expect.poll(async () => (await u.request('GET', '/v1/agent/files/trash')).body.entries.length, { timeout: 60_000, interval: 250 }).toBe(0);
    expect(Date.now() - started, 'kept at least the retention period').toBeGreaterThanOrEqual(RETENTION_MS - 1_000);
    await expect.poll(() => listed('/files/keep.txt'), { timeout: 30_000, interval: 250 }).toBe(1);
    expect(await listed('/files/gone.txt')).toBe(404);
    await expect.poll(async () => (await stored()).length, { timeout: 30_000, interval: 250 }).toBe(base + 1);
    expect((await read(u, '/files/keep.txt')).body.content).toBe('v2');
  }, 120_000);

  it('quota — uploads that would pass FILE_QUOTA_BYTES are refused with 403 QUOTA_EXCEEDED, also 20 at once; a revision counts, a copy does not', async () => {
    const u = await aged.user();
    await put(aged, u, '/files/q/base.bin', Buffer.alloc(3_000, 1));
    await put(aged, u, '/files/q/base.bin', Buffer.alloc(3_000, 2)); // the first content stays as a revision
    expect((await u.request('POST', '/v1/agent/files/copy', { from: '/files/q/base.bin', to: '/files/q/copy.bin' })).status).toBe(200);
    const over = await upload(aged.url, u, { filename: 'big.bin', content: Buffer.alloc(3_000, 3) }, { path: '/files/q/big.bin' });
    expect(over.status, over.text).toBe(403);
    expect(over.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'FILE_QUOTA_BYTES', limit: QUOTA, used: expect.any(Number) } });
    const used = over.body.error.details.used as number;
    expect(used).toBeGreaterThanOrEqual(6_000);
    // 20 uploads of 200 bytes at once, with room for about 10: never all of them, never past the quota.
    const room = QUOTA - used;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => upload(aged.url, u, { filename: `f${i}.bin`, content: Buffer.alloc(200, i) }, { path: `/files/q/many/f${i}.bin` })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    for (const r of results) if (r.status !== 200) expect(r.body?.error?.code, r.text).toBe('QUOTA_EXCEEDED');
    expect(room).toBeLessThan(20 * 200);
    expect(ok).toBe(Math.floor(room / 200));
    expect((await list(u, '/files/q/many')).length).toBe(ok);
  }, 60_000);
});
