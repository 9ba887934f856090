import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCheckpointIndex } from '../src/adapters/checkpoints.redis.js';
import { Checkpoints } from '../src/domain/checkpoints.js';
import { auditIndexAt } from './index-audit.js';
import { put, realFiles, tree, type Files } from './support.js';

/**
 * Rewind and fork with folders created explicitly (docs/api/files.md#folders, #rewind, #fork):
 * they are part of the tree a checkpoint records and a time names. The index runs on an injected
 * clock, so "a time" is exact and nothing sleeps.
 */
const DAY = 24 * 3600 * 1000;
const RETENTION = 30 * DAY;
let now = Date.now();
const clock = () => now;
/** Moves the clock on (1 s unless told), and answers the moment before it moved as an ISO time. */
const later = (ms = 1_000): string => {
  const at = new Date(now).toISOString();
  now += ms;
  return at;
};

let files: Files;
let checkpoints: Checkpoints;
/** The same index with FILE_REVISIONS = 3 records per path. */
let short: Files;
let shortCheckpoints: Checkpoints;

function checkpointsOf(f: Files): Checkpoints {
  const index = new RedisCheckpointIndex({ redis: f.redis, keys: f.index.keys, outbox: f.outbox, ...f.tuning });
  return new Checkpoints({ index, maxCheckpoints: 20, retentionMs: RETENTION, clock });
}

beforeAll(async () => {
  files = await realFiles({ clock, retentionMs: RETENTION });
  checkpoints = checkpointsOf(files);
  short = await realFiles({ clock, retentionMs: RETENTION, keepRevisions: 3 });
  shortCheckpoints = checkpointsOf(short);
});
afterAll(async () => {
  await files?.close();
  await short?.close();
});

const mkdir = (u: string, path: string, f = files) => f.workspace.createDirectory(u, path);
const remove = (u: string, path: string, recursive = false, f = files) => f.workspace.delete(u, path, recursive);

/** The folders created explicitly at or below `path` (the index's marker, docs/api/files.md#folders). */
async function explicitFolders(u: string, path = '/files', f = files): Promise<string[]> {
  const P = f.index.keys.prefix(u);
  const dirs = (await tree(f, u, path)).filter((p) => p.endsWith('/')).map((p) => p.slice(0, -1));
  if (path !== '/files') dirs.unshift(path);
  const out: string[] = [];
  for (const d of dirs) if ((await f.redis.zscore(`${P}c:${d}`, '')) !== null) out.push(d);
  return out;
}

/** Whether `path` is listed as a folder that holds nothing (and its parent lists it as a directory). */
async function emptyFolder(u: string, path: string, f = files): Promise<boolean> {
  const parent = path.slice(0, path.lastIndexOf('/'));
  const listed = (await f.workspace.list(u, parent, false)).entries.find((e) => e.path === path);
  if (!listed || listed.entry) return false;
  return (await f.workspace.list(u, path, false)).entries.length === 0;
}

async function expectSound(u: string, f = files): Promise<void> {
  expect((await auditIndexAt(f.redis, f.index.keys.prefix(u))).problems).toEqual([]);
}

describe('rewind and fork — explicit folders', () => {
  for (const by of ['checkpoint', 'time'] as const) {
    it(`rewind to a ${by}: an explicit empty folder deleted since exists again, empty; one made since is gone; the counts are of files`, async () => {
      const u = files.user();
      await put(files, u, '/files/w/a.txt', 'a');
      await mkdir(u, '/files/w/kept');
      await mkdir(u, '/files/w/gone-since');
      const c = await checkpoints.create(u, '/files/w', '');
      const at = later();
      await remove(u, '/files/w/gone-since');
      await mkdir(u, '/files/w/made-since');
      later();
      expect(await emptyFolder(u, '/files/w/gone-since')).toBe(false);
      const res = await checkpoints.rewind(u, '/files/w', by === 'checkpoint' ? c.checkpointId : at);
      expect(res).toMatchObject({ restored: 0, removed: 0, unchanged: 1 });
      expect(await emptyFolder(u, '/files/w/gone-since')).toBe(true);
      expect(await emptyFolder(u, '/files/w/kept')).toBe(true);
      await expect(files.workspace.list(u, '/files/w/made-since', false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      expect(await tree(files, u, '/files/w')).toEqual(['/files/w/a.txt', '/files/w/gone-since/', '/files/w/kept/']);
      expect(await explicitFolders(u, '/files/w')).toEqual(['/files/w/gone-since', '/files/w/kept']);
      await expectSound(u);
      // The checkpoint the rewind took holds the folders as they were: its undo gives them back.
      later();
      await checkpoints.rewind(u, '/files/w', res.checkpointId);
      expect(await tree(files, u, '/files/w')).toEqual(['/files/w/a.txt', '/files/w/kept/', '/files/w/made-since/']);
      expect(await explicitFolders(u, '/files/w')).toEqual(['/files/w/kept', '/files/w/made-since']);
      await expectSound(u);
    });
  }

  for (const by of ['checkpoint', 'time'] as const) {
    it(`fork at a ${by}: the copy holds the explicit empty folders of then (also when \`from\` is gone), and they are explicit there`, async () => {
      const u = files.user();
      await put(files, u, '/files/src/a.txt', 'a');
      await mkdir(u, '/files/src/empty');
      await mkdir(u, '/files/src/deep/er/est');
      const c = await checkpoints.create(u, '/files/src', '');
      const at = later();
      await remove(u, '/files/src/empty');
      await mkdir(u, '/files/src/made-since');
      await remove(u, '/files/src', true);
      later();
      const state = by === 'checkpoint' ? c.checkpointId : at;
      expect(await checkpoints.fork(u, { from: '/files/src', to: '/files/fork', onConflict: 'error', at: state })).toEqual({ from: '/files/src', path: '/files/fork' });
      expect(await tree(files, u, '/files/fork')).toEqual(['/files/fork/a.txt', '/files/fork/deep/', '/files/fork/deep/er/', '/files/fork/deep/er/est/', '/files/fork/empty/']);
      expect(await explicitFolders(u, '/files/fork')).toEqual(['/files/fork/deep', '/files/fork/deep/er', '/files/fork/deep/er/est', '/files/fork/empty']);
      expect(await emptyFolder(u, '/files/fork/deep/er/est')).toBe(true);
      // A fork of one explicit empty folder of then.
      await checkpoints.fork(u, { from: '/files/src/empty', to: '/files/lone', onConflict: 'error', at: state });
      expect(await emptyFolder(u, '/files/lone')).toBe(true);
      expect(await explicitFolders(u, '/files/lone')).toEqual(['/files/lone']);
      // A path where nothing was then is still 404.
      await expect(checkpoints.fork(u, { from: '/files/src/made-since', to: '/files/x', onConflict: 'error', at: state })).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      await expectSound(u);
    });
  }

  for (const by of ['checkpoint', 'time'] as const) {
    it(`rewind to a ${by}: explicit folders that held files — one deleted with its files comes back explicit, one emptied keeps its files again, one made since goes with its files`, async () => {
      const u = files.user();
      await mkdir(u, '/files/w/full');
      await put(files, u, '/files/w/full/f.txt', 'f');
      await mkdir(u, '/files/w/emptied');
      await put(files, u, '/files/w/emptied/g.txt', 'g');
      // Implicit then, made explicit since.
      await put(files, u, '/files/w/implicit/h.txt', 'h');
      const c = await checkpoints.create(u, '/files/w', '');
      const at = later();
      await remove(u, '/files/w/full', true);
      await remove(u, '/files/w/emptied/g.txt');
      await mkdir(u, '/files/w/implicit');
      await remove(u, '/files/w/implicit/h.txt');
      await mkdir(u, '/files/w/new');
      await put(files, u, '/files/w/new/n.txt', 'n');
      later();
      expect(await emptyFolder(u, '/files/w/emptied')).toBe(true);
      expect(await emptyFolder(u, '/files/w/implicit')).toBe(true);
      const res = await checkpoints.rewind(u, '/files/w', by === 'checkpoint' ? c.checkpointId : at);
      expect(res).toMatchObject({ restored: 3, removed: 1, unchanged: 0 });
      expect(await tree(files, u, '/files/w')).toEqual(['/files/w/emptied/', '/files/w/emptied/g.txt', '/files/w/full/', '/files/w/full/f.txt', '/files/w/implicit/', '/files/w/implicit/h.txt']);
      // /files/w is explicit too: it was made with /files/w/full.
      expect(await explicitFolders(u, '/files/w')).toEqual(['/files/w', '/files/w/emptied', '/files/w/full']);
      await expectSound(u);
      // Explicit again: emptied, it stays; the implicit one goes with its last file, as before.
      await remove(u, '/files/w/full/f.txt');
      expect(await emptyFolder(u, '/files/w/full')).toBe(true);
      await remove(u, '/files/w/implicit/h.txt');
      await expect(files.workspace.list(u, '/files/w/implicit', false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
      await expectSound(u);
    });
  }

  for (const by of ['checkpoint', 'time'] as const) {
    it(`rewind to a ${by}: nested explicit folders come back level by level, and nested ones made since go, also inside a folder of then`, async () => {
      const u = files.user();
      await mkdir(u, '/files/n/a/b/c');
      await mkdir(u, '/files/n/keep');
      const c = await checkpoints.create(u, '/files/n', '');
      const at = later();
      await remove(u, '/files/n/a', true);
      await mkdir(u, '/files/n/x/y/z');
      await mkdir(u, '/files/n/keep/inner/most');
      later();
      await checkpoints.rewind(u, '/files/n', by === 'checkpoint' ? c.checkpointId : at);
      expect(await tree(files, u, '/files/n')).toEqual(['/files/n/a/', '/files/n/a/b/', '/files/n/a/b/c/', '/files/n/keep/']);
      expect(await explicitFolders(u, '/files/n')).toEqual(['/files/n', '/files/n/a', '/files/n/a/b', '/files/n/a/b/c', '/files/n/keep']);
      // Each level is explicit: deleting the innermost leaves the one above, empty.
      await remove(u, '/files/n/a/b/c');
      expect(await emptyFolder(u, '/files/n/a/b')).toBe(true);
      await expectSound(u);
      // A rewind of a folder below: only it changes.
      later();
      await checkpoints.rewind(u, '/files/n/a', by === 'checkpoint' ? c.checkpointId : at);
      expect(await emptyFolder(u, '/files/n/a/b/c')).toBe(true);
      await expectSound(u);
    });
  }

  it('rewind of a path that is itself an explicit folder: deleted since, it comes back; made since (it held files then), it is implicit again', async () => {
    const u = files.user();
    await mkdir(u, '/files/self');
    await put(files, u, '/files/other/o.txt', 'o');
    const at = later();
    const c = await checkpoints.create(u, '/files', '');
    await remove(u, '/files/self');
    await mkdir(u, '/files/other');
    later();
    for (const to of [at, c.checkpointId]) {
      await checkpoints.rewind(u, '/files/self', to);
      expect(await emptyFolder(u, '/files/self')).toBe(true);
      await checkpoints.rewind(u, '/files/other', to);
      expect(await explicitFolders(u, '/files/other')).toEqual([]);
      await remove(u, '/files/self');
      await mkdir(u, '/files/other');
      later();
    }
    await expectSound(u);
  });

  it('rewind to a time: a folder moved since is back where it was and gone where it went; a copy made since goes; a purged folder stays gone', async () => {
    const u = files.user();
    await mkdir(u, '/files/m/here/sub');
    await mkdir(u, '/files/m/purged');
    const at = later();
    await files.workspace.move(u, 'move', { from: '/files/m/here', to: '/files/m/there', onConflict: 'error' });
    await files.workspace.move(u, 'copy', { from: '/files/m/there', to: '/files/m/copy', onConflict: 'error' });
    await files.workspace.delete(u, '/files/m/purged', false, true);
    later();
    expect(await explicitFolders(u, '/files/m')).toEqual(['/files/m', '/files/m/copy', '/files/m/copy/sub', '/files/m/there', '/files/m/there/sub']);
    await checkpoints.rewind(u, '/files/m', at);
    expect(await tree(files, u, '/files/m')).toEqual(['/files/m/here/', '/files/m/here/sub/']);
    expect(await explicitFolders(u, '/files/m')).toEqual(['/files/m', '/files/m/here', '/files/m/here/sub']);
    await expectSound(u);
  });

  it('folder histories follow FILE_REVISIONS: a folder made and deleted more often than that cannot say what it was before (410), as a file cannot', async () => {
    const u = short.user();
    const before = later();
    for (let i = 0; i < 3; i++) {
      await mkdir(u, '/files/t/flip', short);
      later();
      await remove(u, '/files/t/flip', false, short);
      later();
    }
    await expect(shortCheckpoints.rewind(u, '/files/t', before)).rejects.toMatchObject({ code: 'HISTORY_EXPIRED' });
    // A time the kept records reach is fine.
    await mkdir(u, '/files/t/flip', short);
    const at = later();
    await remove(u, '/files/t/flip', false, short);
    later();
    await shortCheckpoints.rewind(u, '/files/t', at);
    expect(await emptyFolder(u, '/files/t/flip', short)).toBe(true);
    await expectSound(u, short);
  });

  it('folder histories follow FILE_REVISION_DAYS: the sweeper drops a deleted folder\'s records a retention period later, and keeps an existing folder\'s', async () => {
    const u = files.user();
    const P = files.index.keys.prefix(u);
    await mkdir(u, '/files/r/old');
    await mkdir(u, '/files/r/stays');
    later();
    await remove(u, '/files/r/old');
    later(RETENTION + DAY);
    await files.sweeper.sweep();
    expect(await files.redis.exists(`${P}dh:/files/r/old`)).toBe(0);
    expect(await files.redis.zrange(`${P}dhx`, '0', '-1')).toEqual(['/files/r', '/files/r/stays']);
    expect(await emptyFolder(u, '/files/r/stays')).toBe(true);
    await expectSound(u);
  });

  it('bounds: the folders a rewind or fork brings back count toward MAX_FILES; a fork that would make a path over 900 bytes is refused (INVALID_PATH), nothing created', async () => {
    const small = await realFiles({ clock, retentionMs: RETENTION, maxFiles: 6 });
    try {
      const cps = checkpointsOf(small);
      const u = small.user();
      await mkdir(u, '/files/q/a/b', small);
      await mkdir(u, '/files/q/c', small);
      const c = await cps.create(u, '/files/q', '');
      // q, q/a, q/a/b, q/c: 4 entries. A fork adds 4: refused whole.
      await expect(cps.fork(u, { from: '/files/q', to: '/files/q2', onConflict: 'error', at: c.checkpointId })).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      expect(await tree(small, u)).toEqual(['/files/q/', '/files/q/a/', '/files/q/a/b/', '/files/q/c/']);
      await remove(u, '/files/q', true, small);
      await mkdir(u, '/files/other/one/two/three/four', small);
      // 5 entries now; the rewind adds 4 folders back (q is one of them): refused whole.
      await expect(cps.rewind(u, '/files/q', c.checkpointId)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      await remove(u, '/files/other', true, small);
      await cps.rewind(u, '/files/q', c.checkpointId);
      expect(await explicitFolders(u, '/files/q', small)).toEqual(['/files/q', '/files/q/a', '/files/q/a/b', '/files/q/c']);
      await expectSound(u, small);
    } finally {
      await small.close();
    }
    const u = files.user();
    // An explicit empty folder 890 bytes deep; its fork to a name 30 bytes longer would be 920.
    const top = `/files/${'d'.repeat(220)}`;
    const deep = `${top}/${'e'.repeat(220)}/${'f'.repeat(220)}/${'g'.repeat(220)}`;
    expect(Buffer.byteLength(deep)).toBe(890);
    await mkdir(u, deep);
    const c = await checkpoints.create(u, '/files', '');
    const at = later();
    const to = `/files/${'x'.repeat(250)}`;
    for (const state of [c.checkpointId, at]) {
      await expect(checkpoints.fork(u, { from: top, to, onConflict: 'error', at: state })).rejects.toMatchObject({ code: 'INVALID_PATH' });
    }
    await expect(files.workspace.list(u, to, false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    await expectSound(u);
  });

  it('a checkpoint of an earlier version (no folders recorded) leaves explicit folders alone; a folder made before folder histories is kept by a rewind to a time', async () => {
    const u = files.user();
    const P = files.index.keys.prefix(u);
    await put(files, u, '/files/l/a.txt', 'a');
    const c = await checkpoints.create(u, '/files/l', '');
    const at = later();
    await mkdir(u, '/files/l/legacy');
    later();
    // As an earlier version left them: a checkpoint without its folders, a folder without a history.
    const meta = JSON.parse((await files.redis.hget(`${P}ckm`, c.checkpointId))!) as Record<string, unknown>;
    delete meta.folders;
    await files.redis.hset(`${P}ckm`, c.checkpointId, JSON.stringify(meta));
    await files.redis.del(`${P}ckd:${c.checkpointId}`, `${P}dh:/files/l/legacy`);
    await files.redis.zrem(`${P}dhx`, '/files/l/legacy');
    await files.redis.zrem(`${P}dho`, '/files/l/legacy');
    await checkpoints.rewind(u, '/files/l', c.checkpointId);
    expect(await emptyFolder(u, '/files/l/legacy')).toBe(true);
    later();
    await checkpoints.rewind(u, '/files/l', at);
    expect(await emptyFolder(u, '/files/l/legacy')).toBe(true);
    // Deleted now, it gets a history from the start: a rewind to a time brings it back.
    await remove(u, '/files/l/legacy');
    later();
    await checkpoints.rewind(u, '/files/l', at);
    expect(await emptyFolder(u, '/files/l/legacy')).toBe(true);
  });
});
