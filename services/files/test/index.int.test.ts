import { createHash } from 'node:crypto';
import { summarizeContent } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisContentSummaries } from '../src/adapters/summaries.redis.js';
import { IndexKeys } from '../src/adapters/index.redis.js';
import { put, realFiles, tree, type Files } from './support.js';

let files: Files;
beforeAll(async () => {
  files = await realFiles();
});
afterAll(async () => files.close());

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('files index', () => {
  it('index — a file creates its directories, a delete removes those it leaves empty', async () => {
    const u = files.user();
    await put(files, u, '/files/a/b/c.txt', 'c');
    await put(files, u, '/files/a/d.txt', 'd');
    expect(await tree(files, u)).toEqual(['/files/a/', '/files/a/b/', '/files/a/b/c.txt', '/files/a/d.txt']);
    await files.workspace.delete(u, '/files/a/b/c.txt', false);
    expect(await tree(files, u)).toEqual(['/files/a/', '/files/a/d.txt']);
    await files.workspace.delete(u, '/files/a/d.txt', false);
    expect(await tree(files, u)).toEqual([]);
  });

  it('index — path and upload rules: nothing under a file, no file over a directory, error/overwrite/uuid', async () => {
    const u = files.user();
    await put(files, u, '/files/f', 'x');
    await expect(put(files, u, '/files/f/g.txt', 'y')).rejects.toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/f' } });
    await put(files, u, '/files/d/x.md', 'x');
    await expect(put(files, u, '/files/d', 'y', true)).rejects.toMatchObject({ code: 'PATH_CONFLICT' });
    await expect(put(files, u, '/files/f', 'z')).rejects.toMatchObject({ code: 'FILE_EXISTS' });
    const over = await put(files, u, '/files/f', 'zz', true);
    expect(over).toMatchObject({ path: '/files/f', size: 2, sha256: sha('zz') });
    const begun = await files.uploads.begin(u, { path: '/files/d/x.md', filename: '', onConflict: 'uuid' });
    expect(begun.path).toMatch(/^\/files\/d\/x-[0-9a-f-]{36}\.md$/);
  });

  it('index — listing pages follow byte order and resume after the last path, with tamper-evident cursors', async () => {
    const u = files.user();
    const names = ['b', 'a', 'é', 'Z', 'a b', 'a!'];
    for (const n of names) await put(files, u, `/files/p/${n}`, n);
    const all = (await tree(files, u, '/files/p')).map((p) => p.slice('/files/p/'.length));
    expect(all).toEqual([...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    const first = await files.workspace.listPage(u, '/files/p', false, 4, '');
    expect(first.entries.map((e) => e.path.slice('/files/p/'.length))).toEqual(all.slice(0, 4));
    await files.workspace.delete(u, `/files/p/${all[1]}`, false);
    const second = await files.workspace.listPage(u, '/files/p', false, 4, first.next!);
    expect(second.entries.map((e) => e.path.slice('/files/p/'.length))).toEqual(all.slice(4));
    expect(second.next).toBeUndefined();
    await expect(files.workspace.listPage(u, '/files', false, 4, first.next!)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'cursor' } });
    await expect(files.workspace.listPage(files.user(), '/files/p', false, 4, first.next!)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(files.workspace.listPage(u, '/files/p', false, 4, `${first.next!}x`)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('index — move and copy of a directory touch only the index; the copy shares bytes, the source of a move is gone', async () => {
    const u = files.user();
    for (let i = 0; i < 30; i++) await put(files, u, `/files/src/sub${i % 3}/f${i}.txt`, `content ${i}`);
    const before = (await files.objects()).length;
    await files.workspace.move(u, 'copy', { from: '/files/src', to: '/files/copy', onConflict: 'error' });
    expect((await files.objects()).length).toBe(before);
    await files.workspace.move(u, 'move', { from: '/files/src', to: '/files/deep/moved', onConflict: 'error' });
    const t = await tree(files, u);
    expect(t.filter((p) => p.startsWith('/files/src'))).toEqual([]);
    expect(t.filter((p) => p.startsWith('/files/deep/moved/') && !p.endsWith('/'))).toHaveLength(30);
    expect(t.filter((p) => p.startsWith('/files/copy/') && !p.endsWith('/'))).toHaveLength(30);
    expect((await files.workspace.read(u, '/files/deep/moved/sub1/f7.txt')).content.toString()).toBe('content 7');
    await expect(files.workspace.move(u, 'move', { from: '/files/copy', to: '/files/deep', onConflict: 'overwrite' })).rejects.toMatchObject({ code: 'PATH_CONFLICT' });
    await expect(files.workspace.move(u, 'move', { from: '/files/copy', to: '/files/copy/x', onConflict: 'error' })).rejects.toMatchObject({ code: 'INVALID_PATH' });
  });

  it('index — the changes feed reports each operation once, in order, scoped to a path', async () => {
    const u = files.user();
    const all = await files.changes.cursor(u, '/files');
    const scoped = await files.changes.cursor(u, '/files/in');
    await put(files, u, '/files/in/a.txt', 'a');
    await put(files, u, '/files/in/a.txt', 'bb', true);
    await put(files, u, '/files/out/b.txt', 'b');
    await files.workspace.move(u, 'move', { from: '/files/out', to: '/files/in/out', onConflict: 'error' });
    await files.workspace.move(u, 'move', { from: '/files/in/a.txt', to: '/files/gone.txt', onConflict: 'error' });
    await files.workspace.delete(u, '/files/in', true);
    const everything = await files.changes.read(u, all, 100, 0);
    expect(everything.changes.map((c) => [c.type, c.kind, c.path])).toEqual([
      ['created', 'file', '/files/in/a.txt'],
      ['updated', 'file', '/files/in/a.txt'],
      ['created', 'file', '/files/out/b.txt'],
      ['moved', 'directory', '/files/in/out'],
      ['moved', 'file', '/files/gone.txt'],
      ['deleted', 'directory', '/files/in'],
    ]);
    expect(everything.changes[1]).toMatchObject({ size: 2, sha256: sha('bb') });
    const inside = await files.changes.read(u, scoped, 100, 0);
    expect(inside.changes.map((c) => [c.type, c.path])).toEqual([
      ['created', '/files/in/a.txt'],
      ['updated', '/files/in/a.txt'],
      ['created', '/files/in/out'],
      ['deleted', '/files/in/a.txt'],
      ['deleted', '/files/in'],
    ]);
    const again = await files.changes.read(u, everything.cursor, 100, 0);
    expect(again).toMatchObject({ changes: [], hasMore: false });
    // Made-up cursors are refused as such, whatever they hold.
    for (const forged of ['WzFd.x', 'bnVsbA.x', 'x', '', `${Buffer.from('["changes:/files","9-0"]').toString('base64url')}.AAAA`]) {
      await expect(files.changes.read(u, forged, 10, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'cursor' } });
    }
  });

  it('index — a long poll returns as soon as a change arrives', async () => {
    const u = files.user();
    const cursor = await files.changes.cursor(u, '/files');
    const started = Date.now();
    const waiting = files.changes.read(u, cursor, 10, 20_000);
    setTimeout(() => void put(files, u, '/files/late.txt', 'x'), 300);
    const got = await waiting;
    expect(got.changes.map((c) => c.path)).toEqual(['/files/late.txt']);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('index — pins keep bytes alive after the file goes; the sweeper removes only what nothing references', async () => {
    // One record per path: the old content of an overwritten file is then kept by its pin alone.
    const one = await realFiles({ keepRevisions: 1 });
    try {
      const u = one.user();
      const agent = `agt_${'a'.repeat(32)}`;
      await put(one, u, '/files/k.md', 'knowledge');
      const [pinned] = await one.knowledge.pin(u, agent, ['/files/k.md']);
      expect(pinned).toMatchObject({ path: '/files/k.md', size: 9, sha256: sha('knowledge'), mimeType: 'text/markdown' });
      await put(one, u, '/files/k.md', 'changed', true);
      await put(one, u, '/files/tmp.txt', 'temporary');
      await one.workspace.delete(u, '/files/tmp.txt', false);
      await one.sweeper.sweep();
      const referenced = async () => new Set(await one.redis.hkeys(`${one.index.keys.prefix(u)}refs`));
      const mine = await one.objects();
      // The pinned old content, the current file, and the deleted file (in the trash).
      expect(mine).toHaveLength(3);
      expect(new Set(mine)).toEqual(await referenced());
      await one.knowledge.removeAgent(u, agent);
      await expect(one.knowledge.pin(u, agent, ['/files/k.md'])).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
      await one.sweeper.sweep();
      expect(await one.objects()).toHaveLength(2);
      expect(new Set(await one.objects())).toEqual(await referenced());
      expect((await one.workspace.read(u, '/files/k.md')).content.toString()).toBe('changed');
    } finally {
      await one.close();
    }
  });

  it('index — a commit stores the summary its uploader computed; a malformed one, or one for a body over the bound, is refused and commits nothing', async () => {
    const bounded = await realFiles({ summaryMaxBytes: 16 });
    try {
      const u = bounded.user();
      const summaries = new RedisContentSummaries({ redis: bounded.redis, keys: new IndexKeys(bounded.bucket) });
      const send = async (path: string, body: string) => {
        const begun = await bounded.uploads.begin(u, { path, filename: '', onConflict: 'error' });
        expect(begun.summaryMaxBytes).toBe(16);
        expect((await fetch(begun.putUrl, { method: 'PUT', body })).status).toBe(200);
        return begun.uploadId;
      };
      const text = 'fn main() {}';
      const ok = await send('/files/s/main.rs', text);
      await bounded.uploads.commit(u, ok, { size: text.length, sha256: sha(text), parts: [], summary: summarizeContent(Buffer.from(text)) });
      const { key } = await bounded.workspace.stat(u, '/files/s/main.rs');
      const [stored] = await summaries.get(u, [key]);
      expect(Buffer.from(stored!).equals(Buffer.from(summarizeContent(Buffer.from(text))))).toBe(true);
      // Not the shape summarize gives (a flags byte of 2; a filter of 63 bytes): refused.
      for (const summary of [Buffer.of(2), Buffer.alloc(64, 1)]) {
        const bad = await send('/files/s/bad.rs', text);
        await expect(bounded.uploads.commit(u, bad, { size: text.length, sha256: sha(text), parts: [], summary })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'summary' } });
      }
      // A body over the bound: its summary is not taken (the service reads such files itself, or not at all).
      const long = 'x'.repeat(17);
      const over = await send('/files/s/long.txt', long);
      await expect(bounded.uploads.commit(u, over, { size: long.length, sha256: sha(long), parts: [], summary: summarizeContent(Buffer.from(long)) })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await tree(bounded, u)).toEqual(['/files/s/', '/files/s/main.rs']);
      // writeFile has the content in hand: it stores the summary too, and only up to the bound.
      await put(bounded, u, '/files/s/short.txt', 'short text');
      await put(bounded, u, '/files/s/longer.txt', 'a text over sixteen bytes');
      const keys = await Promise.all(['/files/s/short.txt', '/files/s/longer.txt'].map(async (p) => (await bounded.workspace.stat(u, p)).key));
      expect((await summaries.get(u, keys)).map((s) => s !== undefined)).toEqual([true, false]);
    } finally {
      await bounded.close();
    }
  });

  it('index — an upload never committed is dropped by the sweeper once it expires', async () => {
    const expiring = await realFiles({ pendingMs: 1 });
    try {
      const u = expiring.user();
      const begun = await expiring.uploads.begin(u, { path: '/files/x.bin', filename: '', onConflict: 'error' });
      const res = await fetch(begun.putUrl, { method: 'PUT', body: 'partial' });
      expect(res.status).toBe(200);
      expect(await expiring.objects()).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 5));
      await expiring.sweeper.sweep();
      expect(await expiring.objects()).toEqual([]);
      await expect(expiring.uploads.commit(u, begun.uploadId, { size: 7, sha256: sha('partial'), parts: [] })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect(await tree(expiring, u)).toEqual([]);
    } finally {
      await expiring.close();
    }
  });

  it('paths the index builds keep the path rules: a folder moved or copied where a path below it would pass 900 bytes → INVALID_PATH, nothing changed', async () => {
    const u = files.user();
    // A file 880 bytes deep under /files/a (segments of 200 bytes and less).
    const deep = `/files/a/${'d'.repeat(200)}/${'e'.repeat(200)}/${'f'.repeat(200)}/${'g'.repeat(200)}/${'h'.repeat(880 - 9 - 4 * 201)}`;
    expect(Buffer.byteLength(deep)).toBe(880);
    await put(files, u, deep, 'deep');
    const before = await tree(files, u);
    for (const op of ['move', 'copy'] as const) {
      // `to` is a valid path, but `to` and the deepest path below `from` together are 1,071 bytes.
      await expect(files.workspace.move(u, op, { from: '/files/a', to: `/files/${'t'.repeat(200)}`, onConflict: 'error' })).rejects.toMatchObject({ code: 'INVALID_PATH' });
      expect(await tree(files, u), op).toEqual(before);
    }
    // Within the bound it works: the same tree under a name as long as `a`.
    await files.workspace.move(u, 'move', { from: '/files/a', to: '/files/b', onConflict: 'error' });
    expect((await files.workspace.read(u, deep.replace('/files/a/', '/files/b/'))).content.toString('utf8')).toBe('deep');
  });
});
