import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditIndex, storedObjects } from './support/files-index-check.js';
import { q, upload } from './support/files.js';
import { buildTree, copy, download, list, move, put, ready, sha256 } from './support/files-api.js';
import { killProcesses, replicaKeys, reviveProcesses } from './support/processes.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * A hostile review of revisions, trash, restore and purge (docs/api/files.md#revisions) and of the
 * byte quota (docs/api/usage.md#byte-quota) and usage: clients that send what they should not,
 * replicas that race, and an audit of the index (test/support/files-index-check.ts) after each
 * attack: usage equals the distinct referenced bytes, every reference is counted exactly, nothing
 * stays reserved, the trash is what it says.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    // The trash of 10,000 files is of a tree of 10,240 files and their folders: past the default MAX_TREE_ENTRIES.
    filesEnv: { FILE_REVISIONS: '3', FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500', MAX_TREE_ENTRIES: '20000' },
    gatewayEnv: { MAX_CONCURRENT_UPLOADS: '32', RATE_LIMIT_BURST: '100000', RATE_LIMIT_PER_SECOND: '100000' },
  });
});
afterAll(async () => {
  await stack?.stop();
});

const read = (u: ApiUser, path: string) => u.request('GET', `/v1/agent/files/read?path=${q(path)}`);
const restore = (u: ApiUser, body: Record<string, unknown>) => u.request('POST', '/v1/agent/files/restore', body);
const remove = (u: ApiUser, path: string, options: { recursive?: boolean; permanent?: boolean } = {}) =>
  u.request('DELETE', `/v1/agent/files?path=${q(path)}&recursive=${options.recursive ?? false}${options.permanent ? '&permanent=true' : ''}`);
const trash = async (u: ApiUser, path: string, recursive = true): Promise<{ path: string; revision: string; sha256: string }[]> => {
  const res = await u.request('GET', `/v1/agent/files/trash?path=${q(path)}&recursive=${recursive}`);
  expect(res.status, res.text).toBe(200);
  return res.body.entries;
};
const revisions = async (u: ApiUser, path: string): Promise<{ revision: string; deleted: boolean; sha256?: string }[]> => {
  const res = await u.request('GET', `/v1/agent/files/revisions?path=${q(path)}`);
  expect(res.status, res.text).toBe(200);
  return res.body.revisions;
};
const usageOf = async (u: ApiUser): Promise<{ count: number; bytes: number }> => {
  const res = await u.request('GET', '/v1/usage');
  expect(res.status, res.text).toBe(200);
  return res.body.files;
};
const usageBytes = async (u: ApiUser): Promise<number> => (await usageOf(u)).bytes;

/** The index is consistent, usage is exact, nothing is reserved, and the bucket ends up holding exactly what is referenced. */
async function expectSound(u: ApiUser): Promise<void> {
  const audit = await auditIndex(stack, u);
  expect(audit.problems).toEqual([]);
  expect(audit.reserved).toEqual({ total: 0, uploads: 0 });
  const files = (await list(u, '/files', { recursive: true })).filter((e) => e.type === 'file').length;
  expect(await usageOf(u)).toMatchObject({ count: files, bytes: audit.bytes });
  await expect.poll(async () => storedObjects(stack, u), { timeout: 30_000, interval: 500 }).toEqual((await auditIndex(stack, u)).referenced);
}

/** No answer of the server is a 5xx for a client's request. */
function no5xx(responses: ApiResponse[]): void {
  for (const r of responses) expect(r.status, r.text).toBeLessThan(500);
}

describe('files — revisions and the byte quota, hostile', () => {
  it('revision ids — malformed, huge, unicode, another user\'s, of a directory or the root: 400 or 404 in the envelope, never a 5xx', async () => {
    const u = await stack.user();
    const other = await stack.user();
    await put(stack, u, '/files/d/a.txt', 'mine');
    const [mine] = await revisions(u, '/files/d/a.txt');
    await put(stack, other, '/files/d/a.txt', 'theirs');
    const [theirs] = await revisions(other, '/files/d/a.txt');
    const bad = ['rev_' + 'g'.repeat(32), 'rev_' + 'A'.repeat(32), 'rev_', 'rev_ü' + '0'.repeat(31), '💥', ' ', theirs!.revision, mine!.revision.toUpperCase(), 'rev_' + '0'.repeat(32)];
    for (const revision of bad) {
      for (const route of ['read', 'download']) {
        const res = await u.request('GET', `/v1/agent/files/${route}?path=/files/d/a.txt&revision=${q(revision)}`);
        expect(res.status, `${route} ${revision}: ${res.text}`).toBe(404);
        expect(res.body.error.code).toBe('REVISION_NOT_FOUND');
      }
      const res = await restore(u, { path: '/files/d/a.txt', revision });
      expect(res.status, `restore ${revision}: ${res.text}`).toBe(404);
      expect(res.body.error.code).toBe('REVISION_NOT_FOUND');
    }
    const huge = 'rev_' + 'a'.repeat(10_000);
    for (const res of [
      await u.request('GET', `/v1/agent/files/read?path=/files/d/a.txt&revision=${huge}`),
      await u.request('GET', `/v1/agent/files/download?path=/files/d/a.txt&revision=${huge}`),
      await restore(u, { path: '/files/d/a.txt', revision: huge }),
      await restore(u, { path: '/files/d/a.txt', revision: 42 }),
      await restore(u, { path: '/files/d/a.txt', revision: ['x'] }),
      await restore(u, { path: '/files/d/a.txt', recursive: 'yes' }),
      await restore(u, { path: '/files/d/a.txt', revision: mine!.revision, recursive: true }),
    ]) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('INVALID_ARGUMENT');
      expect(res.body.error.details.field).toMatch(/^(revision|recursive)$/);
    }
    // The revision of a file, asked for on its folder or on the root.
    for (const path of ['/files/d', '/files']) {
      for (const route of ['read', 'download']) {
        const res = await u.request('GET', `/v1/agent/files/${route}?path=${q(path)}&revision=${mine!.revision}`);
        expect(res.status, `${route} ${path}: ${res.text}`).toBe(404);
        expect(res.body.error.code).toBe('REVISION_NOT_FOUND');
      }
    }
    expect((await restore(u, { path: '/files/d', revision: mine!.revision })).body.error.code).toBe('REVISION_NOT_FOUND');
    expect((await restore(u, { path: '/files', revision: mine!.revision })).body.error.code).toBe('INVALID_PATH');
    expect((await u.request('GET', '/v1/agent/files/revisions?path=/files/d')).status).toBe(404);
    expect((await u.request('GET', '/v1/agent/files/revisions?path=/files')).status).toBe(404);
    await expectSound(u);
  });

  it('revision download — Range, If-None-Match and HEAD on an old revision answer for its bytes, not the current file\'s', async () => {
    const u = await stack.user();
    const old = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256));
    await put(stack, u, '/files/r.bin', old);
    await put(stack, u, '/files/r.bin', 'new');
    const [, first] = await revisions(u, '/files/r.bin');
    const at = (headers: Record<string, string>, method = 'GET') =>
      fetch(`${stack.url}/v1/agent/files/download?path=/files/r.bin&revision=${first!.revision}`, { method, headers: { authorization: `Bearer ${u.token}`, ...headers } });
    const ranged = await at({ range: 'bytes=-10' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe('bytes 4086-4095/4096');
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(old.subarray(4086));
    const cached = await at({ 'if-none-match': `"${sha256(old)}"` });
    expect(cached.status).toBe(304);
    expect((await at({ 'if-none-match': `"${sha256('new')}"` })).status).toBe(200);
    const head = await at({}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('4096');
  });

  it('restore recursive — blocked by a directory at a trashed path or a file above one: 409 and nothing restored; the root undoes everything', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/p/a.txt', 'a');
    await put(stack, u, '/files/p/q/b.txt', 'b');
    await put(stack, u, '/files/top.txt', 'top');
    expect((await remove(u, '/files/p', { recursive: true })).status).toBe(200);
    expect((await remove(u, '/files/top.txt')).status).toBe(200);
    // A directory now where a trashed file was.
    await put(stack, u, '/files/p/a.txt/inner.txt', 'inner');
    const blocked = await restore(u, { path: '/files', recursive: true });
    expect(blocked.status, blocked.text).toBe(409);
    expect(blocked.body.error.code).toBe('PATH_CONFLICT');
    expect((await trash(u, '/files')).map((e) => e.path).sort()).toEqual(['/files/p/a.txt', '/files/p/q/b.txt', '/files/top.txt']);
    expect((await list(u, '/files/p', { recursive: true })).map((e) => e.path)).toEqual(['/files/p/a.txt', '/files/p/a.txt/inner.txt']);
    // A file above a trashed file.
    expect((await remove(u, '/files/p/a.txt', { recursive: true })).status).toBe(200);
    await put(stack, u, '/files/p/q', 'now a file');
    const above = await restore(u, { path: '/files/p', recursive: true });
    expect(above.status, above.text).toBe(409);
    expect(above.body.error).toMatchObject({ code: 'PATH_CONFLICT' });
    expect((await remove(u, '/files/p/q')).status).toBe(200);
    // Two pairs block each other (a file, and one below it from when it was a folder): the newer deletion wins each.
    const all = await restore(u, { path: '/files', recursive: true });
    expect(all.status, all.text).toBe(200);
    expect(all.body).toEqual({ success: true, path: '/files', restored: 3 });
    const files = (await list(u, '/files', { recursive: true })).filter((e) => e.type === 'file').map((e) => e.path);
    expect(files).toEqual(expect.arrayContaining(['/files/p/a.txt/inner.txt', '/files/p/q', '/files/top.txt']));
    expect((await read(u, '/files/p/a.txt/inner.txt')).body.content).toBe('inner');
    expect((await trash(u, '/files')).map((e) => e.path).sort()).toEqual(['/files/p/a.txt', '/files/p/q/b.txt']);
    await expectSound(u);
  });

  it('restore — a revision trimmed by FILE_REVISIONS meanwhile is 404 REVISION_NOT_FOUND, and its bytes are gone only once nothing references them', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/t.txt', 'v1');
    const [first] = await revisions(u, '/files/t.txt');
    for (const v of ['v2', 'v3', 'v4']) await put(stack, u, '/files/t.txt', v);
    const res = await restore(u, { path: '/files/t.txt', revision: first!.revision });
    expect(res.status, res.text).toBe(404);
    expect(res.body.error.code).toBe('REVISION_NOT_FOUND');
    // A copy shares the bytes of v4; trimming v4's record on t.txt must not take them.
    expect((await copy(u, '/files/t.txt', '/files/t-copy.txt')).status).toBe(200);
    for (const v of ['v5', 'v6', 'v7']) await put(stack, u, '/files/t.txt', v);
    expect((await download(stack.url, u, '/files/t-copy.txt')).bytes.toString()).toBe('v4');
    await expectSound(u);
  });

  it('directory moves — every file landing on a path is a new revision there: a folder moved away and back lists no revision twice', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/mv/x.txt', 'x');
    expect((await move(u, '/files/mv', '/files/mv2')).status).toBe(200);
    expect((await move(u, '/files/mv2', '/files/mv')).status).toBe(200);
    const back = await revisions(u, '/files/mv/x.txt');
    expect(back).toHaveLength(2);
    expect(new Set(back.map((r) => r.revision)).size).toBe(2);
    const away = await revisions(u, '/files/mv2/x.txt');
    expect(away).toHaveLength(1);
    expect(back.map((r) => r.revision)).not.toContain(away[0]!.revision);
    // Each is its own revision: restoring the older one brings back the bytes as a third.
    const res = await restore(u, { path: '/files/mv/x.txt', revision: back[1]!.revision });
    expect(res.status, res.text).toBe(200);
    expect(new Set((await revisions(u, '/files/mv/x.txt')).map((r) => r.revision)).size).toBe(3);
    await expectSound(u);
  });

  it('restore changes — a file restored recursively is one created file change with its size and sha256; a restore of nothing is no change', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/c/one.md', 'one');
    expect((await remove(u, '/files/c/one.md')).status).toBe(200);
    const cursor = (await u.request('GET', '/v1/agent/files/changes/cursor?path=/files/c')).body.cursor;
    expect((await restore(u, { path: '/files/c/one.md', recursive: true })).body).toEqual({ success: true, path: '/files/c/one.md', restored: 1 });
    expect((await restore(u, { path: '/files/c', recursive: true })).body).toEqual({ success: true, path: '/files/c', restored: 0 });
    const changes = await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`);
    expect(changes.status, changes.text).toBe(200);
    expect(changes.body.changes).toEqual([{ type: 'created', kind: 'file', path: '/files/c/one.md', at: expect.any(String), size: 3, sha256: sha256('one') }]);
  });

  it('permanent delete racing a download in flight — the download ends whole or broken, never with other bytes; a new one is 404 at once', async () => {
    const u = await stack.user();
    const big = Buffer.from(Array.from({ length: 12 * 1024 * 1024 }, (_, i) => (i * 31) % 253));
    await put(stack, u, '/files/dl/big.bin', big);
    const res = await fetch(`${stack.url}/v1/agent/files/download?path=/files/dl/big.bin`, { headers: { authorization: `Bearer ${u.token}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    if (first.value) chunks.push(first.value);
    expect((await remove(u, '/files/dl/big.bin', { permanent: true })).status).toBe(200);
    const after = await u.request('GET', '/v1/agent/files/download?path=/files/dl/big.bin');
    expect(after.status).toBe(404);
    expect(after.body.error.code).toBe('FILE_NOT_FOUND');
    await expect.poll(async () => (await storedObjects(stack, u)).length, { timeout: 30_000, interval: 250 }).toBe((await auditIndex(stack, u)).referenced.length);
    let broken = false;
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    } catch {
      broken = true;
    }
    const got = Buffer.concat(chunks);
    if (!broken) expect(sha256(got)).toBe(sha256(big));
    else expect(got.equals(big.subarray(0, got.length))).toBe(true);
    await expectSound(u);
  }, 60_000);

  it('knowledge pins — a permanently deleted file an Agent pinned keeps its bytes (counted once) until the Agent goes; then they leave the store', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/k/doc.md', '# knowledge\n');
    await put(stack, u, '/files/k/doc.md', '# knowledge, v2\n');
    const created = await u.request('POST', '/v1/agents', { name: 'K', knowledgeFiles: [{ path: '/files/k/doc.md' }] });
    expect(created.status, created.text).toBe(201);
    const agent = created.body.agentId as string;
    expect((await remove(u, '/files/k', { recursive: true, permanent: true })).status).toBe(200);
    const pinned = await auditIndex(stack, u, [agent]);
    expect(pinned.problems).toEqual([]);
    expect(await usageBytes(u)).toBe(pinned.bytes);
    await expect.poll(async () => storedObjects(stack, u), { timeout: 30_000, interval: 500 }).toEqual(pinned.referenced);
    expect((await u.request('DELETE', `/v1/agents/${agent}`)).status).toBeLessThan(300);
    await expect.poll(async () => (await auditIndex(stack, u)).problems, { timeout: 30_000, interval: 250 }).toEqual([]);
    await expectSound(u);
  }, 60_000);

  it('usage — bytes the user already has, uploaded again (an unchanged overwrite, another path), are stored and counted once', async () => {
    const u = await stack.user();
    const bytes = Buffer.from(Array.from({ length: 5_000 }, (_, i) => (i * 17) % 251));
    await put(stack, u, '/files/s/a.bin', 'first');
    const base = await usageBytes(u);
    await put(stack, u, '/files/s/a.bin', bytes);
    expect(await usageBytes(u)).toBe(base + bytes.length);
    await put(stack, u, '/files/s/a.bin', bytes); // an agent writing the file again, unchanged
    await put(stack, u, '/files/s/b.bin', bytes);
    expect(await usageBytes(u)).toBe(base + bytes.length);
    const revs = await revisions(u, '/files/s/a.bin');
    expect(revs.map((r) => r.sha256)).toEqual([sha256(bytes), sha256(bytes), sha256('first')]);
    expect(new Set(revs.map((r) => r.revision)).size).toBe(3);
    await expectSound(u);
    // The shared bytes stay while anything references them.
    expect((await remove(u, '/files/s/a.bin', { permanent: true })).status).toBe(200);
    expect((await download(stack.url, u, '/files/s/b.bin')).sha256).toBe(sha256(bytes));
    expect(await usageBytes(u)).toBe(base - 'first'.length + bytes.length);
    expect((await remove(u, '/files/s', { recursive: true, permanent: true })).status).toBe(200);
    await expectSound(u);
  }, 60_000);

  it('races — restores, uploads, deletes, moves, copies and purges of the same paths and folders at once: no 5xx, a sound index, exact usage', async () => {
    const u = await stack.user();
    const paths = ['/files/r/a.txt', '/files/r/b.txt', '/files/r/d/x.txt', '/files/r/d/y.txt', '/files/r/e/x.txt'];
    const folders = ['/files/r/d', '/files/r/e'];
    for (const p of paths) await put(stack, u, p, `seed ${p}`);
    let seed = 12345;
    const pick = <T>(items: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return items[seed % items.length]!;
    };
    const someRevision = async (p: string): Promise<string> => {
      const res = await u.request('GET', `/v1/agent/files/revisions?path=${q(p)}`);
      return res.status === 200 ? pick(res.body.revisions as { revision: string }[]).revision : `rev_${'0'.repeat(32)}`;
    };
    const ops: (() => Promise<ApiResponse>)[] = [
      () => upload(stack.url, u, { filename: 'f', content: `w${seed}` }, { path: pick(paths), onConflict: pick(['overwrite', 'error', 'uuid']) }),
      () => remove(u, pick(paths)),
      () => remove(u, pick(folders), { recursive: true }),
      async () => {
        const p = pick(paths);
        return restore(u, { path: p, revision: await someRevision(p) });
      },
      () => restore(u, { path: pick([...folders, '/files/r']), recursive: true }),
      () => move(u, pick(paths), pick(paths), pick(['overwrite', 'error', 'uuid'])),
      () => move(u, pick(folders), pick(folders)),
      () => copy(u, pick(paths), pick(paths), 'overwrite'),
      () => copy(u, pick(folders), `${pick(folders)}2`),
      () => remove(u, pick([...paths, ...folders]), { recursive: true, permanent: true }),
    ];
    const responses: ApiResponse[] = [];
    const workers = Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 40; i++) responses.push(await pick(ops)());
    });
    await Promise.all(workers);
    no5xx(responses);
    await expectSound(u);
  }, 120_000);

  it('trash of 10,000 files — listed whole in one answer, in time; a SIGKILL of every files replica mid recursive restore restores all or nothing', async () => {
    const u = await stack.user();
    const built = await buildTree(stack, u, '/files/big', 40, 8);
    expect(built.files.size).toBe(10_240);
    expect((await remove(u, '/files/big', { recursive: true })).status).toBe(200);
    const started = Date.now();
    const listed = await u.request('GET', '/v1/agent/files/trash?path=/files/big&recursive=true');
    expect(listed.status, listed.text.slice(0, 300)).toBe(200);
    expect(listed.body.entries).toHaveLength(10_240);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await u.request('GET', '/v1/agent/files/trash?path=/files/big&recursive=false')).body.entries).toEqual([]);
    const files = replicaKeys(stack, 'files');
    const restoring = restore(u, { path: '/files/big', recursive: true });
    // Nothing outside shows the restore under way (Redis itself is busy running it): the kill
    // comes a moment after the call went out, while the step of ~10,000 files runs.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await killProcesses(stack, files);
    const answer = await restoring;
    expect([200, 503], answer.text).toContain(answer.status);
    await reviveProcesses(stack, files);
    await ready(stack.url);
    await expect.poll(async () => (await u.request('GET', '/v1/agent/files/trash?path=/files/big')).status, { timeout: 30_000 }).toBe(200);
    const left = (await trash(u, '/files/big')).length;
    const present = (await list(u, '/files/big', { recursive: true }).catch(() => [])).filter((e) => e.type === 'file').length;
    expect([left, present]).toContainEqual(0);
    expect(left + present).toBe(10_240);
    await expectSound(u);
  }, 300_000);
});

