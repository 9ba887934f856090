import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { userTag } from '@workspace/platform';
import { RedisCheckpointIndex } from '../src/adapters/checkpoints.redis.js';
import { Checkpoints } from '../src/domain/checkpoints.js';
import { put, realFiles, tree, type Files } from './support.js';

/**
 * Bounded tree work and the entry quota (docs/api/files.md#bounded-tree-work,
 * docs/api/usage.md#entry-quota), on the index itself: every tree operation refuses a tree past
 * MAX_TREE_ENTRIES before anything changes and works at exactly the bound; every way entries are
 * created holds to MAX_FILES, also under concurrency. "Nothing changed" is every key of the user
 * by content (every key's type and content), the listing, the trash, the usage and the changes feed.
 */
const BOUND = 50;
const LIMIT = 20;
const RETENTION_MS = 30 * 24 * 3600 * 1000;

let bounded: Files;
let bounds: Checkpoints;
let quota: Files;
let quotaCheckpoints: Checkpoints;
const checkpointsOf = (f: Files, tuning = f.tuning) =>
  new Checkpoints({ index: new RedisCheckpointIndex({ redis: f.redis, keys: f.index.keys, outbox: f.outbox, ...tuning }), maxCheckpoints: 10, retentionMs: RETENTION_MS });
beforeAll(async () => {
  bounded = await realFiles({ maxTreeEntries: BOUND });
  bounds = checkpointsOf(bounded);
  quota = await realFiles({ maxFiles: LIMIT });
  quotaCheckpoints = checkpointsOf(quota);
});
afterAll(async () => {
  await bounded?.close();
  await quota?.close();
});

/**
 * Every key of the user (the index, the outbox list), by content in a canonical order (a hash's
 * DUMP follows its table's order, which incremental rehashing moves on reads alone).
 */
async function keysOf(f: Files, u: string): Promise<Record<string, string>> {
  const nodes = f.redis.isCluster ? (f.redis as Cluster).nodes('master') : [f.redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', `${userTag(u)}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
  }
  const out: Record<string, string> = {};
  for (const key of keys.sort()) out[key] = await contentOf(f, key);
  return out;
}

/** A key's type and content as JSON, in an order that depends on the content alone. */
async function contentOf(f: Files, key: string): Promise<string> {
  const r = f.redis;
  const type = await r.type(key);
  const pairs = (flat: string[]) => Array.from({ length: flat.length / 2 }, (_, i) => `${flat[2 * i]}=${flat[2 * i + 1]}`);
  const content: Record<string, () => Promise<unknown>> = {
    string: () => r.get(key),
    hash: async () => pairs(Object.entries(await r.hgetall(key)).flat()).sort(),
    zset: () => r.zrange(key, '0', '-1', 'WITHSCORES'),
    list: () => r.lrange(key, 0, -1),
    set: async () => (await r.smembers(key)).sort(),
    stream: () => r.xrange(key, '-', '+'),
  };
  return JSON.stringify([type, await (content[type] ?? (() => Promise.resolve(null)))()]);
}

async function stateOf(f: Files, u: string) {
  return { keys: await keysOf(f, u), tree: await tree(f, u), trash: (await f.revisions.trash(u, '/files', true)).entries, usage: await f.uploads.usage(u) };
}

/** Runs `op`, which must be refused; nothing of the user may have changed. → the error. */
async function refused(f: Files, u: string, op: () => Promise<unknown>): Promise<unknown> {
  const cursor = await f.changes.cursor(u, '/files');
  const before = await stateOf(f, u);
  const err = await op().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the operation was refused').toBeDefined();
  expect(await stateOf(f, u)).toEqual(before);
  expect((await f.changes.read(u, cursor, 100, 0)).changes).toEqual([]);
  return err;
}

/** `n` files at `${dir}/f<i>.txt`, 10 at a time. */
async function files(f: Files, u: string, dir: string, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, from + n - i) }, (_, j) => put(f, u, `${dir}/f${String(i + j).padStart(3, '0')}.txt`, `file ${i + j}`)));
  }
}

/** A tree at `root` of `n` entries as a listing counts them: the folder d and n - 1 files in it. */
const treeOf = (f: Files, u: string, root: string, n: number) => files(f, u, `${root}/d`, n - 1);

const tooLarge = (field: string) => ({ code: 'INVALID_ARGUMENT', details: { field, limit: String(BOUND) } });
const full = (used = LIMIT) => ({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_FILES', limit: String(LIMIT), used: String(used) } });

describe(`bounded tree work (MAX_TREE_ENTRIES = ${BOUND})`, () => {
  it('move and copy — a tree of one entry more is refused before anything changes (details.field from, details.limit); at exactly the bound both work', async () => {
    const u = bounded.user();
    await treeOf(bounded, u, '/files/t', BOUND + 1);
    expect(await tree(bounded, u, '/files/t')).toHaveLength(BOUND + 1);
    expect(await refused(bounded, u, () => bounded.workspace.move(u, 'move', { from: '/files/t', to: '/files/u', onConflict: 'error' }))).toMatchObject(tooLarge('from'));
    expect(await refused(bounded, u, () => bounded.workspace.move(u, 'copy', { from: '/files/t', to: '/files/u', onConflict: 'error' }))).toMatchObject(tooLarge('from'));
    // A folder below it is not too large.
    await bounded.workspace.move(u, 'copy', { from: '/files/t/d', to: '/files/t2', onConflict: 'error' });
    await bounded.workspace.delete(u, '/files/t2', true, true);
    await bounded.workspace.delete(u, '/files/t/d/f000.txt', false, true);
    expect(await tree(bounded, u, '/files/t')).toHaveLength(BOUND);
    await bounded.workspace.move(u, 'move', { from: '/files/t', to: '/files/u', onConflict: 'error' });
    await bounded.workspace.move(u, 'copy', { from: '/files/u', to: '/files/c', onConflict: 'error' });
    expect(await tree(bounded, u, '/files/c')).toHaveLength(BOUND);
    expect(await tree(bounded, u, '/files/u')).toHaveLength(BOUND);
  });

  it('recursive delete and restore of a folder — past the bound refused, unchanged; at the bound they work (the restore counts the trash there)', async () => {
    const u = bounded.user();
    await treeOf(bounded, u, '/files/t', BOUND + 1);
    expect(await refused(bounded, u, () => bounded.workspace.delete(u, '/files/t', true))).toMatchObject(tooLarge('path'));
    // A trash of 51 paths below /files/r, each half deleted on its own (within the bound).
    await files(bounded, u, '/files/r/a', 30);
    await files(bounded, u, '/files/r/b', BOUND + 1 - 30);
    await bounded.workspace.delete(u, '/files/r/a', true);
    await bounded.workspace.delete(u, '/files/r/b', true);
    expect((await bounded.revisions.trash(u, '/files/r', true)).entries).toHaveLength(BOUND + 1);
    expect(await refused(bounded, u, () => bounded.revisions.restoreTree(u, '/files/r'))).toMatchObject(tooLarge('path'));
    expect(await bounded.revisions.restoreTree(u, '/files/r/a')).toEqual({ path: '/files/r/a', restored: 30 });
    expect(await bounded.revisions.restoreTree(u, '/files/r')).toEqual({ path: '/files/r', restored: BOUND + 1 - 30 });
    // At the bound: a tree of 50 entries goes and comes back whole.
    await bounded.workspace.delete(u, '/files/t/d/f000.txt', false, true);
    const before = await tree(bounded, u, '/files/t');
    expect(before).toHaveLength(BOUND);
    await bounded.workspace.delete(u, '/files/t', true);
    expect((await bounded.revisions.trash(u, '/files/t', true)).entries).toHaveLength(BOUND - 1);
    await files(bounded, u, '/files/s', BOUND, 100);
    await bounded.workspace.delete(u, '/files/s', true);
    expect((await bounded.revisions.trash(u, '/files/s', true)).entries).toHaveLength(BOUND);
    expect(await bounded.revisions.restoreTree(u, '/files/s')).toEqual({ path: '/files/s', restored: BOUND });
    expect(await bounded.revisions.restoreTree(u, '/files/t')).toEqual({ path: '/files/t', restored: BOUND - 1 });
    expect(await tree(bounded, u, '/files/t')).toEqual(before);
  });

  it('purge — past the bound refused, by the tree or by the paths with a history below it; at the bound it works', async () => {
    const u = bounded.user();
    await treeOf(bounded, u, '/files/p', BOUND + 1);
    expect(await refused(bounded, u, () => bounded.workspace.delete(u, '/files/p', true, true))).toMatchObject(tooLarge('path'));
    // 30 files now and 21 in the trash: the tree is 31 entries, its histories 51 paths.
    await files(bounded, u, '/files/h/a', 30);
    await files(bounded, u, '/files/h/b', BOUND + 1 - 30);
    await bounded.workspace.delete(u, '/files/h/b', true);
    expect(await tree(bounded, u, '/files/h')).toHaveLength(31);
    expect(await refused(bounded, u, () => bounded.workspace.delete(u, '/files/h', true, true))).toMatchObject(tooLarge('path'));
    await bounded.workspace.delete(u, '/files/h/b', true, true);
    await bounded.workspace.delete(u, '/files/h', true, true);
    await bounded.workspace.delete(u, '/files/p/d/f000.txt', false, true);
    await bounded.workspace.delete(u, '/files/p', true, true);
    expect(await tree(bounded, u)).toEqual([]);
    expect((await bounded.revisions.trash(u, '/files', true)).entries).toEqual([]);
  });

  it('checkpoint, rewind and fork — past the bound refused (now, for a time by the paths with a history, and by the tree a checkpoint would rebuild); at the bound they work', async () => {
    const u = bounded.user();
    await treeOf(bounded, u, '/files/k', BOUND + 1);
    const at = new Date(Date.now() + 1).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await refused(bounded, u, () => bounds.create(u, '/files/k', 'big'))).toMatchObject(tooLarge('path'));
    expect(await refused(bounded, u, () => bounds.rewind(u, '/files/k', at))).toMatchObject(tooLarge('path'));
    expect(await refused(bounded, u, () => bounds.fork(u, { from: '/files/k', to: '/files/k2', onConflict: 'error', at }))).toMatchObject(tooLarge('from'));
    await bounded.workspace.delete(u, '/files/k/d/f000.txt', false, true);
    // 49 files and their folder: 50 entries, 49 paths with a history.
    const taken = await bounds.create(u, '/files/k', 'at the bound');
    expect(taken.files).toBe(BOUND - 1);
    const time = new Date(Date.now() + 1).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await bounded.workspace.delete(u, '/files/k', true);
    expect(await bounds.rewind(u, '/files/k', taken.checkpointId)).toMatchObject({ restored: BOUND - 1, removed: 0 });
    await bounded.workspace.delete(u, '/files/k', true);
    expect(await bounds.rewind(u, '/files/k', time)).toMatchObject({ restored: BOUND - 1, removed: 0 });
    await bounds.fork(u, { from: '/files/k', to: '/files/k2', onConflict: 'error', at: taken.checkpointId });
    expect(await tree(bounded, u, '/files/k2')).toHaveLength(BOUND);
    // A smaller bound later (another deployment's setting): the tree a checkpoint of 50 entries would rebuild is past it.
    const smaller = checkpointsOf(bounded, { ...bounded.tuning, maxTreeEntries: BOUND - 10 });
    await bounded.workspace.delete(u, '/files/k', true);
    expect(await refused(bounded, u, () => smaller.rewind(u, '/files/k', taken.checkpointId))).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'path', limit: String(BOUND - 10) } });
    expect(await refused(bounded, u, () => smaller.fork(u, { from: '/files/k', to: '/files/k3', onConflict: 'error', at: taken.checkpointId }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'from', limit: String(BOUND - 10) },
    });
  });
});

describe(`the entry quota (MAX_FILES = ${LIMIT})`, () => {
  it('MAX_FILES counts the files and folders of the tree and the paths in the trash, each one; the usage shows it', async () => {
    const u = quota.user();
    await put(quota, u, '/files/a/x.txt', 'x');
    expect(await quota.uploads.usage(u)).toMatchObject({ count: 1, entries: 2, maxFiles: LIMIT });
    // The folder a went with its last file; x.txt is in the trash.
    await quota.workspace.delete(u, '/files/a/x.txt', false);
    expect(await quota.uploads.usage(u)).toMatchObject({ count: 0, entries: 1 });
    await quota.workspace.createDirectory(u, '/files/e/f');
    expect(await quota.uploads.usage(u)).toMatchObject({ count: 0, entries: 3 });
    // Back from the trash: a again, x.txt out of the trash.
    await quota.revisions.restoreTree(u, '/files/a');
    expect(await quota.uploads.usage(u)).toMatchObject({ count: 1, entries: 4 });
    // A copy shares its bytes but is an entry of its own.
    const bytes = (await quota.uploads.usage(u)).bytes;
    await quota.workspace.move(u, 'copy', { from: '/files/a/x.txt', to: '/files/e/x.txt', onConflict: 'error' });
    expect(await quota.uploads.usage(u)).toMatchObject({ count: 2, entries: 5, bytes });
    // A permanent delete frees the places.
    await quota.workspace.delete(u, '/files/e', true, true);
    expect(await quota.uploads.usage(u)).toMatchObject({ count: 1, entries: 2 });
  });

  it('the copy and move doubling — copies share their bytes, yet the copy that would pass MAX_FILES is refused, and nothing changes', async () => {
    const u = quota.user();
    await files(quota, u, '/files/a', 7);
    expect((await quota.uploads.usage(u)).entries).toBe(8);
    await quota.workspace.move(u, 'copy', { from: '/files/a', to: '/files/b', onConflict: 'error' });
    await quota.workspace.move(u, 'move', { from: '/files/b', to: '/files/a/b', onConflict: 'error' });
    const usage = await quota.uploads.usage(u);
    expect(usage).toMatchObject({ count: 14, entries: 16 });
    expect(await refused(quota, u, () => quota.workspace.move(u, 'copy', { from: '/files/a', to: '/files/c', onConflict: 'error' }))).toMatchObject(full(16));
    expect((await quota.uploads.usage(u)).bytes).toBe(usage.bytes);
  });

  it('every way in is refused at the quota (upload, its precheck, folder, copy, restore, restore of a folder, fork, rewind), and nothing changes; what adds nothing still works', async () => {
    const u = quota.user();
    await put(quota, u, '/files/w/keep.txt', 'keep');
    await put(quota, u, '/files/w/sub/s.txt', 's');
    await put(quota, u, '/files/w/del.txt', 'del');
    const taken = await quotaCheckpoints.create(u, '/files/w', 'before');
    // s.txt and del.txt go to the trash; the folder sub goes with s.txt.
    await quota.workspace.delete(u, '/files/w/sub/s.txt', false);
    await quota.workspace.delete(u, '/files/w/del.txt', false);
    // w, keep.txt, and the trash's s.txt and del.txt: 4; a folder of 15 files fills the rest.
    await files(quota, u, '/files/fill', 15);
    expect((await quota.uploads.usage(u)).entries).toBe(LIMIT);
    const [s] = (await quota.revisions.list(u, '/files/w/sub/s.txt')).revisions.filter((r) => !r.deleted);
    expect(await refused(quota, u, () => put(quota, u, '/files/w/new.txt', 'new'))).toMatchObject(full());
    expect(await refused(quota, u, () => quota.uploads.begin(u, { path: '/files/w/new.txt', filename: '', onConflict: 'error' }))).toMatchObject(full());
    expect(await refused(quota, u, () => quota.workspace.createDirectory(u, '/files/w/empty'))).toMatchObject(full());
    expect(await refused(quota, u, () => quota.workspace.move(u, 'copy', { from: '/files/w/keep.txt', to: '/files/w/keep2.txt', onConflict: 'error' }))).toMatchObject(full());
    // Back from the trash, s.txt needs its folder again: one more entry.
    expect(await refused(quota, u, () => quota.revisions.restore(u, '/files/w/sub/s.txt', s!.revision))).toMatchObject(full());
    expect(await refused(quota, u, () => quota.revisions.restoreTree(u, '/files/w/sub'))).toMatchObject(full());
    expect(await refused(quota, u, () => quotaCheckpoints.fork(u, { from: '/files/w', to: '/files/w2', onConflict: 'error', at: taken.checkpointId }))).toMatchObject(full());
    expect(await refused(quota, u, () => quotaCheckpoints.rewind(u, '/files/w', taken.checkpointId))).toMatchObject(full());
    // A move that needs a new folder at its destination adds one.
    expect(await refused(quota, u, () => quota.workspace.move(u, 'move', { from: '/files/fill/f000.txt', to: '/files/w/moved/f.txt', onConflict: 'error' }))).toMatchObject(full());
    // What adds nothing: an overwrite, a rename, a move into an existing folder, a delete, del.txt back into its folder (it leaves the trash).
    await put(quota, u, '/files/w/keep.txt', 'kept', true);
    await quota.workspace.move(u, 'move', { from: '/files/w/keep.txt', to: '/files/w/kept.txt', onConflict: 'error' });
    await quota.workspace.move(u, 'move', { from: '/files/fill/f000.txt', to: '/files/w/f000.txt', onConflict: 'error' });
    await quota.revisions.restoreTree(u, '/files/w/del.txt');
    expect((await quota.uploads.usage(u)).entries).toBe(LIMIT);
    // A place freed (a permanent delete) takes one more, not two.
    await quota.workspace.delete(u, '/files/fill/f001.txt', false, true);
    await put(quota, u, '/files/w/new.txt', 'new');
    expect(await refused(quota, u, () => put(quota, u, '/files/w/new2.txt', 'new'))).toMatchObject(full());
  });

  it('under concurrency — 20 creates (folders, uploads) with 5 places left: exactly 5 succeed, the rest 403, and the entries never pass MAX_FILES', async () => {
    for (const create of [
      (u: string, i: number) => quota.workspace.createDirectory(u, `/files/n${i}`),
      (u: string, i: number) => put(quota, u, `/files/n${i}.txt`, `n${i}`),
    ]) {
      const u = quota.user();
      await files(quota, u, '/files/base', LIMIT - 6);
      expect((await quota.uploads.usage(u)).entries).toBe(LIMIT - 5);
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => create(u, i)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_FILES', limit: String(LIMIT) } });
      expect((await quota.uploads.usage(u)).entries).toBe(LIMIT);
      expect(await tree(quota, u)).toHaveLength(LIMIT);
    }
  });
});
