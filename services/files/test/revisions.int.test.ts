import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userTag } from '@workspace/platform';
import { IndexKeys } from '../src/adapters/index.redis.js';
import { DEFAULT_MAX_FILES } from '../src/config.js';
import { RedisContentSummaries } from '../src/adapters/summaries.redis.js';
import { KnowledgeTransfer } from '../src/domain/knowledge-transfer.js';
import { MiB, put, realFiles, tree, type Files } from './support.js';

let files: Files;
/** The index's clock runs ahead by this much: deletions made apart in a test are ordered apart. */
let skew = 0;
const later = () => void (skew += 1_000);
beforeAll(async () => {
  files = await realFiles({ clock: () => Date.now() + skew });
});
afterAll(async () => files.close());

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const REV = /^rev_[0-9a-f]{32}$/;
const text = async (f: Files, u: string, path: string, revision = '') => (await f.workspace.read(u, path, revision)).content.toString();
/** The events queued for the user, as [type, path, kind]. */
const events = async (f: Files, u: string) =>
  (await f.outbox.peek(userTag(u), 100_000)).map((raw) => JSON.parse(raw) as { type: string; data: { path: string; kind: string } }).map((e) => [e.type, e.data.path, e.data.kind]);

describe('files revisions', () => {
  it('revisions — every write of a path is a revision, newest first; a delete records a deletion', async () => {
    const u = files.user();
    await put(files, u, '/files/a.txt', 'one');
    await put(files, u, '/files/a.txt', 'two', true);
    await put(files, u, '/files/src.txt', 'copied');
    await files.workspace.move(u, 'copy', { from: '/files/src.txt', to: '/files/a.txt', onConflict: 'overwrite' });
    await put(files, u, '/files/m.txt', 'moved');
    await files.workspace.move(u, 'move', { from: '/files/m.txt', to: '/files/a.txt', onConflict: 'overwrite' });
    await files.workspace.delete(u, '/files/a.txt', false);
    const { path, revisions } = await files.revisions.list(u, '/files/a.txt');
    expect(path).toBe('/files/a.txt');
    expect(revisions.map((r) => [r.deleted, r.deleted ? undefined : r.sha256])).toEqual([
      [true, undefined],
      [false, sha('moved')],
      [false, sha('copied')],
      [false, sha('two')],
      [false, sha('one')],
    ]);
    expect(new Set(revisions.map((r) => r.revision)).size).toBe(5);
    for (const r of revisions) expect(r.revision).toMatch(REV);
    expect(revisions[1]).toMatchObject({ size: 5, mimeType: 'text/plain' });
    expect(revisions[0]).toEqual({ revision: revisions[0]!.revision, deleted: true, modifiedAt: expect.any(String) });
    // Every revision with content reads back as it was.
    expect(await text(files, u, '/files/a.txt', revisions[3]!.revision)).toBe('two');
    expect(await text(files, u, '/files/a.txt', revisions[4]!.revision)).toBe('one');
    const download = await files.workspace.openDownload(u, '/files/a.txt', revisions[2]!.revision);
    expect(download.entry).toMatchObject({ path: '/files/a.txt', size: 6, sha256: sha('copied') });
    expect(Buffer.from(await (await fetch(download.url)).arrayBuffer()).toString()).toBe('copied');
  });

  it('revisions — REVISION_NOT_FOUND for another path\'s revision, a deletion, a malformed id; FILE_NOT_FOUND for a path that never held a file', async () => {
    const u = files.user();
    await put(files, u, '/files/x.txt', 'x');
    await put(files, u, '/files/y.txt', 'y');
    await files.workspace.delete(u, '/files/y.txt', false);
    const [ofX] = (await files.revisions.list(u, '/files/x.txt')).revisions;
    const [deletion] = (await files.revisions.list(u, '/files/y.txt')).revisions;
    for (const revision of [ofX!.revision, deletion!.revision, 'rev_nope', `rev_${'0'.repeat(32)}`]) {
      await expect(files.workspace.read(u, '/files/y.txt', revision), revision).rejects.toMatchObject({ code: 'REVISION_NOT_FOUND' });
      await expect(files.revisions.restore(u, '/files/y.txt', revision), revision).rejects.toMatchObject({ code: 'REVISION_NOT_FOUND' });
    }
    await expect(files.revisions.list(u, '/files/never.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    await expect(files.revisions.list(u, '/files')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    await expect(files.revisions.list(u, '/files/../x')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    // Another user sees none of it.
    await expect(files.revisions.list(files.user(), '/files/x.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('revisions — a path keeps FILE_REVISIONS records; the oldest go and the sweeper reclaims their bytes', async () => {
    const three = await realFiles({ keepRevisions: 3 });
    try {
      const u = three.user();
      for (let i = 1; i <= 5; i++) await put(three, u, '/files/v.txt', `version ${i}`, true);
      const { revisions } = await three.revisions.list(u, '/files/v.txt');
      expect(revisions.map((r) => (r.deleted ? 'deleted' : r.sha256))).toEqual([sha('version 5'), sha('version 4'), sha('version 3')]);
      await three.sweeper.sweep();
      expect(await three.objects()).toHaveLength(3);
      expect(new Set(await three.objects())).toEqual(new Set(await three.redis.hkeys(`${three.index.keys.prefix(u)}refs`)));
      // A deletion is a record too; the trashed file stays restorable whatever was trimmed.
      await three.workspace.delete(u, '/files/v.txt', false);
      const [trashed] = (await three.revisions.trash(u, '/files', false)).entries;
      expect(trashed).toMatchObject({ path: '/files/v.txt', sha256: sha('version 5') });
      expect((await three.revisions.list(u, '/files/v.txt')).revisions).toHaveLength(3);
      await three.sweeper.sweep();
      await three.revisions.restore(u, '/files/v.txt', trashed!.revision);
      expect(await text(three, u, '/files/v.txt')).toBe('version 5');
    } finally {
      await three.close();
    }
  });

  it('trash — deleted files whose path holds no file, directly in a path or anywhere below it, newest deletion first', async () => {
    const u = files.user();
    await put(files, u, '/files/t/keep.txt', 'keep');
    await put(files, u, '/files/t/gone.md', 'gone');
    await put(files, u, '/files/t/dir/a.txt', 'a');
    await put(files, u, '/files/t/dir/sub/b.txt', 'bb');
    await files.workspace.delete(u, '/files/t/gone.md', false);
    later();
    await files.workspace.delete(u, '/files/t/dir', true);
    const direct = await files.revisions.trash(u, '/files/t', false);
    expect(direct).toMatchObject({ path: '/files/t', recursive: false });
    expect(direct.entries.map((e) => e.path)).toEqual(['/files/t/gone.md']);
    const gone = direct.entries[0]!;
    expect(gone).toMatchObject({ name: 'gone.md', size: 4, sha256: sha('gone'), mimeType: 'text/markdown' });
    expect(gone.revision).toBe((await files.revisions.list(u, '/files/t/gone.md')).revisions[1]!.revision);
    expect(Date.parse(gone.deletedAt)).toBeGreaterThan(0);
    const all = await files.revisions.trash(u, '/files', true);
    expect(all.entries.map((e) => e.path)).toEqual(['/files/t/dir/a.txt', '/files/t/dir/sub/b.txt', '/files/t/gone.md']);
    expect((await files.revisions.trash(u, '/files/t/dir', false)).entries.map((e) => e.path)).toEqual(['/files/t/dir/a.txt']);
    expect((await files.revisions.trash(u, '/files/nowhere', true)).entries).toEqual([]);
    // A path that holds a file again leaves the trash, whatever wrote it.
    await put(files, u, '/files/t/gone.md', 'back');
    await files.workspace.move(u, 'copy', { from: '/files/t/keep.txt', to: '/files/t/dir/a.txt', onConflict: 'error' });
    expect((await files.revisions.trash(u, '/files', true)).entries.map((e) => e.path)).toEqual(['/files/t/dir/sub/b.txt']);
    // A moved file is not deleted: its old path does not enter the trash.
    await files.workspace.move(u, 'move', { from: '/files/t/keep.txt', to: '/files/t/kept.txt', onConflict: 'error' });
    expect((await files.revisions.trash(u, '/files', true)).entries.map((e) => e.path)).toEqual(['/files/t/dir/sub/b.txt']);
  });

  it('restore — overwrite then restore gives the same bytes as a new revision, with one change and one event', async () => {
    const u = files.user();
    await put(files, u, '/files/r.md', '# good');
    const [good] = (await files.revisions.list(u, '/files/r.md')).revisions;
    await put(files, u, '/files/r.md', '# broken by an agent', true);
    const cursor = await files.changes.cursor(u, '/files');
    const before = (await events(files, u)).length;
    const restored = await files.revisions.restore(u, '/files/r.md/', good!.revision);
    expect(restored).toEqual({ path: '/files/r.md', size: 6, mimeType: 'text/markdown', sha256: sha('# good'), revision: expect.stringMatching(REV) });
    expect(restored.revision).not.toBe(good!.revision);
    expect(await text(files, u, '/files/r.md')).toBe('# good');
    expect(await files.workspace.stat(u, '/files/r.md')).toMatchObject({ sha256: sha('# good') });
    const { revisions } = await files.revisions.list(u, '/files/r.md');
    expect(revisions.map((r) => r.revision)[0]).toBe(restored.revision);
    expect(revisions).toHaveLength(3);
    const changes = await files.changes.read(u, cursor, 10, 0);
    expect(changes.changes).toMatchObject([{ type: 'updated', kind: 'file', path: '/files/r.md', size: 6, sha256: sha('# good') }]);
    expect((await events(files, u)).slice(before)).toEqual([['file.updated', '/files/r.md', 'file']]);
    // A deleted file comes back as created.
    await files.workspace.delete(u, '/files/r.md', false);
    const again = await files.revisions.restore(u, '/files/r.md', good!.revision);
    expect(again.sha256).toBe(sha('# good'));
    expect((await events(files, u)).at(-1)).toEqual(['file.created', '/files/r.md', 'file']);
    expect((await files.revisions.trash(u, '/files', true)).entries).toEqual([]);
  });

  it('restore — 409 PATH_CONFLICT for a directory at the path or a file above it; INVALID_PATH for the root', async () => {
    const u = files.user();
    await put(files, u, '/files/c/f.txt', 'f');
    const [rev] = (await files.revisions.list(u, '/files/c/f.txt')).revisions;
    await files.workspace.delete(u, '/files/c/f.txt', false);
    await put(files, u, '/files/c/f.txt/inside.txt', 'now a directory');
    await expect(files.revisions.restore(u, '/files/c/f.txt', rev!.revision)).rejects.toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/c/f.txt' } });
    await expect(files.revisions.restoreTree(u, '/files/c')).rejects.toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/c/f.txt' } });
    await files.workspace.delete(u, '/files/c', true);
    await put(files, u, '/files/c', 'now a file');
    await expect(files.revisions.restore(u, '/files/c/f.txt', rev!.revision)).rejects.toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/c' } });
    await expect(files.revisions.restoreTree(u, '/files/c/f.txt')).rejects.toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/c' } });
    await expect(files.revisions.restore(u, '/files', rev!.revision)).rejects.toMatchObject({ code: 'INVALID_PATH' });
    // Nothing changed by the refusals.
    expect(await tree(files, u)).toEqual(['/files/c']);
  });

  it('restore — a recursive delete of 1,000 files undone in one step: one change, one event, identical bytes', async () => {
    const u = files.user();
    const contents = new Map<string, string>();
    for (let i = 0; i < 10; i++) {
      const p = `/files/proj/d${i % 3}/f${i}.txt`;
      contents.set(p, `file ${i}`);
      await put(files, u, p, `file ${i}`);
    }
    // 10 files → 1,000 by copies (no bytes are copied).
    await files.workspace.move(u, 'copy', { from: '/files/proj', to: '/files/big/c0', onConflict: 'error' });
    for (let i = 1; i < 100; i++) await files.workspace.move(u, 'copy', { from: '/files/big/c0', to: `/files/big/c${i}`, onConflict: 'error' });
    await put(files, u, '/files/outside.txt', 'not below');
    const before = await tree(files, u, '/files/big');
    expect(before.filter((p) => !p.endsWith('/'))).toHaveLength(1_000);
    await files.workspace.delete(u, '/files/big', true);
    await files.workspace.delete(u, '/files/outside.txt', false);
    expect((await files.revisions.trash(u, '/files/big', true)).entries).toHaveLength(1_000);
    const cursor = await files.changes.cursor(u, '/files');
    const queued = (await events(files, u)).length;
    const started = Date.now();
    expect(await files.revisions.restoreTree(u, '/files/big')).toEqual({ path: '/files/big', restored: 1_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await tree(files, u, '/files/big')).toEqual(before);
    expect(await text(files, u, '/files/big/c57/d1/f7.txt')).toBe('file 7');
    const listed = await files.workspace.list(u, '/files/big', true);
    for (const e of listed.entries) if (e.entry) expect(e.entry.sha256, e.path).toBe(sha(contents.get(e.path.replace(/^\/files\/big\/c\d+/, '/files/proj'))!));
    expect((await files.changes.read(u, cursor, 10, 0)).changes).toMatchObject([{ type: 'created', kind: 'directory', path: '/files/big' }]);
    expect((await events(files, u)).slice(queued)).toEqual([['file.created', '/files/big', 'directory']]);
    // Only what was below the path came back.
    expect((await files.revisions.trash(u, '/files', true)).entries.map((e) => e.path)).toEqual(['/files/outside.txt']);
    expect(await files.revisions.restoreTree(u, '/files/big')).toEqual({ path: '/files/big', restored: 0 });
  });

  it('restore — recursive: two trashed files that block each other (a file, and one below it when it was a folder): the newer deletion wins', async () => {
    const u = files.user();
    await put(files, u, '/files/k/x/inner.txt', 'inner');
    await files.workspace.delete(u, '/files/k/x', true);
    later();
    await put(files, u, '/files/k/x', 'a file now');
    await files.workspace.delete(u, '/files/k/x', false);
    expect(await files.revisions.restoreTree(u, '/files/k')).toEqual({ path: '/files/k', restored: 1 });
    expect(await text(files, u, '/files/k/x')).toBe('a file now');
    expect((await files.revisions.trash(u, '/files/k', true)).entries.map((e) => e.path)).toEqual(['/files/k/x/inner.txt']);
    // The path itself, when it is the trashed file, comes back as a file change.
    await files.workspace.delete(u, '/files/k/x', false);
    const cursor = await files.changes.cursor(u, '/files');
    expect(await files.revisions.restoreTree(u, '/files/k/x')).toEqual({ path: '/files/k/x', restored: 1 });
    expect((await files.changes.read(u, cursor, 10, 0)).changes).toMatchObject([{ type: 'created', kind: 'file', path: '/files/k/x', sha256: sha('a file now') }]);
  });

  it('restore — recursive: files deleted one by one at different times, in folders out of byte order, all come back whole and listed', async () => {
    const u = files.user();
    const paths = ['/files/m/b/2.txt', '/files/m/a/1.txt', '/files/m/c/d/4.txt', '/files/m/a/3.txt', '/files/m/top.txt'];
    for (const p of paths) await put(files, u, p, `content of ${p}`);
    await put(files, u, '/files/m/keep.txt', 'stays');
    // Newest deletion first is the order the restore takes: not the paths' byte order.
    for (const p of paths) {
      later();
      await files.workspace.delete(u, p, false);
    }
    expect(await tree(files, u, '/files/m')).toEqual(['/files/m/keep.txt']);
    expect(await files.revisions.restoreTree(u, '/files/m')).toEqual({ path: '/files/m', restored: paths.length });
    expect(await tree(files, u, '/files/m')).toEqual(['/files/m/a/', '/files/m/a/1.txt', '/files/m/a/3.txt', '/files/m/b/', '/files/m/b/2.txt', '/files/m/c/', '/files/m/c/d/', '/files/m/c/d/4.txt', '/files/m/keep.txt', '/files/m/top.txt']);
    // Each folder's own listing (its child set) holds its files, with the entries the tree has.
    expect((await files.workspace.list(u, '/files/m/a', false)).entries.map((e) => e.path)).toEqual(['/files/m/a/1.txt', '/files/m/a/3.txt']);
    expect((await files.workspace.list(u, '/files/m/c', false)).entries.map((e) => e.path)).toEqual(['/files/m/c/d']);
    for (const p of paths) {
      expect(await text(files, u, p)).toBe(`content of ${p}`);
      const [now, deletion] = (await files.revisions.list(u, p)).revisions;
      expect(now).toMatchObject({ deleted: false, sha256: sha(`content of ${p}`) });
      expect(deletion).toMatchObject({ deleted: true });
    }
    expect((await files.revisions.trash(u, '/files/m', true)).entries).toEqual([]);
  });

  it('permanent delete — a file with all its revisions goes, its bytes at the next sweep whatever the grace; shared bytes stay', async () => {
    const slow = await realFiles({ graceMs: 3_600_000 });
    try {
      const u = slow.user();
      await put(slow, u, '/files/p/a.txt', 'secret 1');
      await put(slow, u, '/files/p/a.txt', 'secret 2', true);
      await slow.workspace.move(u, 'copy', { from: '/files/p/a.txt', to: '/files/p/copy.txt', onConflict: 'error' });
      const [, first] = (await slow.revisions.list(u, '/files/p/a.txt')).revisions;
      const cursor = await slow.changes.cursor(u, '/files');
      await slow.workspace.delete(u, '/files/p/a.txt', false, true);
      await expect(slow.revisions.list(u, '/files/p/a.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      await expect(slow.workspace.read(u, '/files/p/a.txt', first!.revision)).rejects.toMatchObject({ code: 'REVISION_NOT_FOUND' });
      expect((await slow.revisions.trash(u, '/files', true)).entries).toEqual([]);
      expect((await slow.changes.read(u, cursor, 10, 0)).changes).toMatchObject([{ type: 'deleted', kind: 'file', path: '/files/p/a.txt' }]);
      expect(await slow.objects()).toHaveLength(2);
      await slow.sweeper.sweep();
      // 'secret 1' is gone; 'secret 2' stays for the copy that shares it.
      expect(await slow.objects()).toHaveLength(1);
      expect(await text(slow, u, '/files/p/copy.txt')).toBe('secret 2');
      await expect(slow.workspace.delete(u, '/files/p/a.txt', false, true)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    } finally {
      await slow.close();
    }
  });

  it('search summaries — one is kept only while its object is referenced; the sweep that deletes the bytes drops it, and shared bytes keep theirs', async () => {
    const swept = await realFiles();
    try {
      const u = swept.user();
      const summaries = new RedisContentSummaries({ redis: swept.redis, keys: new IndexKeys(swept.bucket) });
      await put(swept, u, '/files/s/a.txt', 'alpha');
      await put(swept, u, '/files/s/b.txt', 'beta');
      await swept.workspace.move(u, 'copy', { from: '/files/s/b.txt', to: '/files/s/b2.txt', onConflict: 'error' });
      const keyA = (await swept.workspace.stat(u, '/files/s/a.txt')).key;
      const keyB = (await swept.workspace.stat(u, '/files/s/b.txt')).key;
      const summary = (n: number) => new Uint8Array([n, 1, 2, 3]);
      await summaries.put(u, keyA, summary(1));
      await summaries.put(u, keyB, summary(2));
      // An object nobody references (a search that read a file deleted meanwhile) keeps none.
      await summaries.put(u, 'never-referenced', summary(3));
      expect((await summaries.get(u, [keyA, keyB, 'never-referenced'])).map((b) => b && Buffer.from(b).toString('hex'))).toEqual(['01010203', '02010203', undefined]);
      await swept.workspace.delete(u, '/files/s/a.txt', false, true);
      await swept.workspace.delete(u, '/files/s/b.txt', false, true);
      // Until the sweep the bytes, and their summary, are still there.
      expect((await summaries.get(u, [keyA])).map((b) => b !== undefined)).toEqual([true]);
      await swept.sweeper.sweep();
      expect(await swept.objects()).not.toContain(keyA);
      const [a, b] = await summaries.get(u, [keyA, keyB]);
      expect(a).toBeUndefined();
      // b2.txt still shares b.txt's bytes: object and summary stay.
      expect(b && Buffer.from(b).toString('hex')).toBe('02010203');
      expect(await swept.objects()).toContain(keyB);
    } finally {
      await swept.close();
    }
  });

  it('permanent delete — a folder in the trash needs recursive; it purges every history below, current files too, and nothing beside it', async () => {
    const u = files.user();
    await put(files, u, '/files/q/d/x.txt', 'x');
    await put(files, u, '/files/q/d/sub/y.txt', 'y');
    await put(files, u, '/files/q/dd.txt', 'beside');
    await files.workspace.delete(u, '/files/q/d', true);
    await put(files, u, '/files/q/d/new.txt', 'new');
    await expect(files.workspace.delete(u, '/files/q/d', false, true)).rejects.toMatchObject({ code: 'DIRECTORY_NOT_EMPTY' });
    await files.workspace.delete(u, '/files/q/d', true, true);
    expect(await tree(files, u, '/files/q')).toEqual(['/files/q/dd.txt']);
    expect((await files.revisions.trash(u, '/files', true)).entries).toEqual([]);
    for (const p of ['/files/q/d/x.txt', '/files/q/d/sub/y.txt', '/files/q/d/new.txt']) await expect(files.revisions.list(u, p)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect((await files.revisions.list(u, '/files/q/dd.txt')).revisions).toHaveLength(1);
    // A folder that is only in the trash: recursive purges it, without a change (the tree is as it was).
    await put(files, u, '/files/q/gone/z.txt', 'z');
    await files.workspace.delete(u, '/files/q/gone', true);
    const cursor = await files.changes.cursor(u, '/files');
    await expect(files.workspace.delete(u, '/files/q/gone', false, true)).rejects.toMatchObject({ code: 'DIRECTORY_NOT_EMPTY' });
    await files.workspace.delete(u, '/files/q/gone', true, true);
    expect((await files.revisions.trash(u, '/files', true)).entries).toEqual([]);
    expect((await files.changes.read(u, cursor, 10, 0)).changes).toEqual([]);
    await expect(files.workspace.delete(u, '/files/q/gone', true, true)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('retention — a revision goes a retention period after it stopped being current, a trashed file after its deletion; the current file stays', async () => {
    let now = Date.now();
    const R = 10_000;
    const aged = await realFiles({ retentionMs: R, clock: () => now });
    try {
      const u = aged.user();
      const t0 = now;
      await put(aged, u, '/files/v.txt', 'v1');
      now += 1_000;
      await put(aged, u, '/files/v.txt', 'v2', true); // v1 stopped being current at t0 + 1 s
      now += 1_000;
      await put(aged, u, '/files/x.txt', 'x');
      await aged.workspace.delete(u, '/files/x.txt', false); // in the trash since t0 + 2 s
      await put(aged, u, '/files/m.txt', 'moved away');
      await aged.workspace.move(u, 'move', { from: '/files/m.txt', to: '/files/n.txt', onConflict: 'error' });
      const shas = async (p: string) => (await aged.revisions.list(u, p)).revisions.map((r) => (r.deleted ? 'deleted' : r.sha256));
      now = t0 + 1_000 + R - 1;
      await aged.sweeper.sweep();
      expect(await shas('/files/v.txt')).toEqual([sha('v2'), sha('v1')]);
      now = t0 + 1_000 + R;
      await aged.sweeper.sweep();
      expect(await shas('/files/v.txt')).toEqual([sha('v2')]);
      expect((await aged.revisions.trash(u, '/files', true)).entries.map((e) => e.path)).toEqual(['/files/x.txt']);
      now = t0 + 2_000 + R;
      await aged.sweeper.sweep();
      expect((await aged.revisions.trash(u, '/files', true)).entries).toEqual([]);
      await expect(aged.revisions.list(u, '/files/x.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      // The old path of a moved file keeps its record a retention period too, then it goes.
      await expect(aged.revisions.list(u, '/files/m.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      // Long after, the current files are whole, and the bucket holds exactly what they reference.
      now += 100 * R;
      await aged.sweeper.sweep();
      expect(await shas('/files/v.txt')).toEqual([sha('v2')]);
      expect(await text(aged, u, '/files/n.txt')).toBe('moved away');
      expect(await aged.objects()).toHaveLength(2);
      expect(new Set(await aged.objects())).toEqual(new Set(await aged.redis.hkeys(`${aged.index.keys.prefix(u)}refs`)));
      // A write made after the user's turn was set is still retained in time.
      await put(aged, u, '/files/v.txt', 'v3', true);
      now += R;
      await aged.sweeper.sweep();
      expect(await shas('/files/v.txt')).toEqual([sha('v3')]);
    } finally {
      await aged.close();
    }
  });

  it('retention — the old path of a moved file, or of a file in a moved folder, keeps its revision a retention period after the move, not after the write', async () => {
    let now = Date.now();
    const R = 10_000;
    const aged = await realFiles({ retentionMs: R, clock: () => now });
    try {
      const u = aged.user();
      const t0 = now;
      await put(aged, u, '/files/a.txt', 'a');
      await put(aged, u, '/files/d/b.txt', 'b');
      now = t0 + R - 1_000;
      await aged.workspace.move(u, 'move', { from: '/files/a.txt', to: '/files/a2.txt', onConflict: 'error' });
      await aged.workspace.move(u, 'move', { from: '/files/d', to: '/files/d2', onConflict: 'error' });
      const count = async (p: string) => (await aged.revisions.list(u, p)).revisions.length;
      // A retention period after the writes, but not after the moves: the old paths keep theirs.
      now = t0 + R + 5_000;
      await aged.sweeper.sweep();
      expect(await count('/files/a.txt')).toBe(1);
      expect(await count('/files/d/b.txt')).toBe(1);
      expect(await text(aged, u, '/files/a.txt', (await aged.revisions.list(u, '/files/a.txt')).revisions[0]!.revision)).toBe('a');
      now = t0 + 2 * R;
      await aged.sweeper.sweep();
      await expect(aged.revisions.list(u, '/files/a.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      await expect(aged.revisions.list(u, '/files/d/b.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      expect(await text(aged, u, '/files/a2.txt')).toBe('a');
      expect(await text(aged, u, '/files/d2/b.txt')).toBe('b');
    } finally {
      await aged.close();
    }
  });

  it('quota — FILE_QUOTA_BYTES counts files, revisions and the trash, each object once; concurrent uploads never pass it', async () => {
    const small = await realFiles({ quotaBytes: 100 });
    try {
      const u = small.user();
      const bytes = (n: number, c = 'x') => c.repeat(n);
      await put(small, u, '/files/a.txt', bytes(40));
      await put(small, u, '/files/a.txt', bytes(30, 'y'), true); // the 40 bytes stay as a revision
      await small.workspace.move(u, 'copy', { from: '/files/a.txt', to: '/files/b.txt', onConflict: 'error' }); // shares its 30 bytes
      await small.workspace.delete(u, '/files/b.txt', false);
      // The entries (MAX_FILES): a.txt, and b.txt in the trash.
      expect(await small.uploads.usage(u)).toEqual({ count: 1, bytes: 70, quotaBytes: 100, entries: 2, maxFiles: DEFAULT_MAX_FILES });
      await expect(put(small, u, '/files/c.txt', bytes(31))).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'FILE_QUOTA_BYTES', limit: '100', used: '70' } });
      expect(await tree(small, u)).toEqual(['/files/a.txt']);
      await put(small, u, '/files/c.txt', bytes(30));
      // Full: an upload is refused before its bytes are sent.
      await expect(small.uploads.begin(u, { path: '/files/d.txt', filename: '', onConflict: 'error' })).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      // A restore takes no new bytes; a permanent delete gives back what nothing else holds.
      const [, forty] = (await small.revisions.list(u, '/files/a.txt')).revisions;
      await small.revisions.restore(u, '/files/a.txt', forty!.revision);
      expect((await small.uploads.usage(u)).bytes).toBe(100);
      await small.workspace.delete(u, '/files/c.txt', false, true);
      expect(await small.uploads.usage(u)).toEqual({ count: 1, bytes: 70, quotaBytes: 100, entries: 2, maxFiles: DEFAULT_MAX_FILES });
      // 20 concurrent uploads of 10 new bytes each with 30 left: exactly 3 succeed, whatever their order.
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => put(small, u, `/files/many/${i}.txt`, String(i).padStart(10, 'z'))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'QUOTA_EXCEEDED' });
      // a.txt, the folder many and its 3 files, b.txt in the trash.
      expect(await small.uploads.usage(u)).toEqual({ count: 4, bytes: 100, quotaBytes: 100, entries: 6, maxFiles: DEFAULT_MAX_FILES });
      // Refused uploads leave nothing: the bucket holds exactly what is referenced.
      await small.sweeper.sweep();
      expect(new Set(await small.objects())).toEqual(new Set(await small.redis.hkeys(`${small.index.keys.prefix(u)}refs`)));
    } finally {
      await small.close();
    }
  });

  it('quota — uploads reserve bytes as they stream: a reservation holds room against others, the commit settles it, an abort or expiry gives it back', async () => {
    let now = Date.now();
    const small = await realFiles({ quotaBytes: 100, pendingMs: 60_000, clock: () => now });
    try {
      const u = small.user();
      const begin = (path: string) => small.uploads.begin(u, { path, filename: '', onConflict: 'error' });
      const a = await begin('/files/a.bin');
      const b = await begin('/files/b.bin');
      await small.uploads.reserve(u, a.uploadId, 40);
      await small.uploads.reserve(u, a.uploadId, 60); // a running total: 20 more
      await small.uploads.reserve(u, a.uploadId, 50); // never shrinks
      await expect(small.uploads.reserve(u, b.uploadId, 41)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'FILE_QUOTA_BYTES', limit: '100', used: '60' } });
      await small.uploads.reserve(u, b.uploadId, 40);
      // Full with reservations: a new upload is refused before it starts.
      await expect(begin('/files/c.bin')).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', details: { used: '100' } });
      // The commit settles a's reservation into 55 bytes of usage (it reserved 60).
      await small.blobs.put((await small.index.getUpload(u, a.uploadId))!.key, Buffer.alloc(55, 1), 'application/octet-stream');
      await small.uploads.commit(u, a.uploadId, { size: 55, sha256: createHash('sha256').update(Buffer.alloc(55, 1)).digest('hex'), parts: [] });
      expect((await small.uploads.usage(u)).bytes).toBe(55);
      // b still holds 40: 5 left.
      const c = await begin('/files/c.bin');
      await expect(small.uploads.reserve(u, c.uploadId, 6)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      // An abort gives b's 40 back.
      await small.uploads.abort(u, b.uploadId);
      await small.uploads.reserve(u, c.uploadId, 45);
      await expect(small.uploads.reserve(u, b.uploadId, 1)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      // An upload that expires gives its reservation back at the sweep.
      now += 120_000;
      await small.sweeper.sweep();
      expect(await small.index.getUpload(u, c.uploadId)).toBeUndefined();
      const d = await begin('/files/d.bin');
      await small.uploads.reserve(u, d.uploadId, 45);
      expect(await small.redis.hgetall(`${small.index.keys.prefix(u)}rsv`)).toEqual({ [d.uploadId]: '45' });
      await small.uploads.abort(u, d.uploadId);
      expect(await small.redis.exists(`${small.index.keys.prefix(u)}rsvt`, `${small.index.keys.prefix(u)}rsv`)).toBe(0);
      await expect(small.uploads.reserve(u, 'up_nope', 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(small.uploads.reserve(u, d.uploadId, -1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'totalBytes' } });
    } finally {
      await small.close();
    }
  });

  it("quota — an import's staged knowledge reserves every size at once (all or none), before a byte is sent; the pin settles it, counting known bytes once", async () => {
    const small = await realFiles({ quotaBytes: 100, pendingMs: 60_000 });
    try {
      const u = small.user();
      const transfer = new KnowledgeTransfer({ index: small.index, uploads: small.uploads, blobs: small.blobs, pendingMs: 60_000 });
      const prefix = small.index.keys.prefix(u);
      await put(small, u, '/files/known.txt', 'k'.repeat(10));
      // 10 used: 95 more do not fit, and nothing of the refused staging stays.
      await expect(transfer.stage(u, [50, 45])).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'FILE_QUOTA_BYTES', limit: '100', used: '10' } });
      expect(await small.redis.hlen(`${prefix}up`)).toBe(0);
      expect(await small.redis.exists(`${prefix}rsv`, `${prefix}rsvt`)).toBe(0);
      await expect(transfer.stage(u, [65 * MiB])).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      expect(await small.redis.hlen(`${prefix}up`)).toBe(0);
      // 90 fit: held against every other upload until the pin.
      const staged = await transfer.stage(u, [50, 30, 10]);
      expect(await small.redis.get(`${prefix}rsvt`)).toBe('90');
      await expect(small.uploads.begin(u, { path: '/files/late.bin', filename: '', onConflict: 'error' })).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      const bytes = [Buffer.alloc(50, 1), Buffer.alloc(30, 2), Buffer.from('k'.repeat(10))];
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      for (const [i, s] of staged.entries()) await fetch(s.putUrl, { method: 'PUT', body: bytes[i]! });
      const files = staged.map((s, i) => ({ uploadId: s.uploadId, sha256: sha(bytes[i]!), size: bytes[i]!.byteLength }));
      // A size beyond what was reserved is refused, and nothing is pinned.
      await expect(transfer.pinStaged(u, `agt_${'1'.repeat(32)}`, [{ ...files[0]!, size: 51 }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'files[0].size' } });
      await transfer.pinStaged(u, `agt_${'1'.repeat(32)}`, files);
      // Reservations settled: 10 + 50 + 30, the known 10 bytes shared with the file, not counted again.
      expect(await small.redis.exists(`${prefix}rsv`, `${prefix}rsvt`, `${prefix}up`)).toBe(0);
      expect((await small.uploads.usage(u)).bytes).toBe(90);
      const pins = await small.index.pinnedKnowledge(u, `agt_${'1'.repeat(32)}`);
      const [known] = await small.index.stat(u, ['/files/known.txt']);
      expect(pins[sha(bytes[2]!)]).toBe((known as { key: string }).key);
      await small.sweeper.sweep();
      expect(new Set(await small.objects())).toEqual(new Set(await small.redis.hkeys(`${prefix}refs`)));
    } finally {
      await small.close();
    }
  });

  it('sweeper — bytes of revisions and of the trash stay; nothing unreferenced is left', async () => {
    const u = files.user();
    await put(files, u, '/files/s/a.txt', 'a1');
    await put(files, u, '/files/s/a.txt', 'a2', true);
    await put(files, u, '/files/s/b.txt', 'b');
    await files.workspace.delete(u, '/files/s', true);
    await files.sweeper.sweep();
    const mine = (await files.objects()).filter((k) => k.includes(`/${createHash('sha256').update(u).digest('hex')}/`));
    expect(mine).toHaveLength(3);
    expect(new Set(mine)).toEqual(new Set(await files.redis.hkeys(`${files.index.keys.prefix(u)}refs`)));
    const [a1] = (await files.revisions.list(u, '/files/s/a.txt')).revisions.slice(-1);
    expect(await text(files, u, '/files/s/a.txt', a1!.revision)).toBe('a1');
  });
});
