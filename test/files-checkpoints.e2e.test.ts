import { readEvents } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testNats } from './support/backends.js';
import { q } from './support/files.js';
import { download, ISO_MS, list, move, ok, put, read, sha256 } from './support/files-api.js';
import { auditIndex } from './support/files-index-check.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  // Three records per path, and unreferenced bytes go at the next sweep: what a checkpoint keeps
  // must survive both.
  stack = await startStack({ filesEnv: { FILE_REVISIONS: '3', FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '300', MAX_CHECKPOINTS: '6' } });
});
afterAll(async () => {
  await stack?.stop();
});

const CKP = /^ckp_[0-9a-f]{32}$/;

const checkpoint = (u: ApiUser, body: Record<string, unknown> = {}): Promise<ApiResponse> => u.request('POST', '/v1/agent/files/checkpoints', body);
const rewind = (u: ApiUser, path: string, to: string): Promise<ApiResponse> => u.request('POST', '/v1/agent/files/rewind', { path, to });
const remove = (u: ApiUser, path: string, recursive = false): Promise<ApiResponse> => u.request('DELETE', `/v1/agent/files?path=${q(path)}&recursive=${recursive}`);

/** Every file at or below `path`: path → sha256 (empty when the path does not exist). */
async function tree(u: ApiUser, path: string): Promise<Record<string, string>> {
  const res = await u.request('GET', `/v1/agent/files?path=${q(path)}&recursive=true`);
  if (res.status === 404) return {};
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries((res.body.entries as { path: string; type: string; sha256?: string }[]).filter((e) => e.type === 'file').map((e) => [e.path, e.sha256!]));
}

async function taken(u: ApiUser, path: string, label = ''): Promise<{ checkpointId: string; createdAt: string; files: number; bytes: number }> {
  const res = await checkpoint(u, { path, label });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** A moment strictly after everything before it and strictly before everything after it. */
async function moment(): Promise<string> {
  await new Promise((r) => setTimeout(r, 5));
  const at = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  return at;
}

async function seed(u: ApiUser): Promise<void> {
  await put(stack, u, '/files/w/a.txt', 'a0');
  await put(stack, u, '/files/w/a.txt', 'a1');
  await put(stack, u, '/files/w/b.txt', 'b');
  await put(stack, u, '/files/w/sub/c.txt', 'c');
  await put(stack, u, '/files/w/sub/deep/d.txt', 'd');
  await put(stack, u, '/files/outside/e.txt', 'e');
}

const CHANGES: Record<string, (u: ApiUser) => Promise<unknown>> = {
  modify: (u) => put(stack, u, '/files/w/a.txt', 'a2'),
  create: (u) => put(stack, u, '/files/w/sub/new.txt', 'new'),
  delete: async (u) => expect((await remove(u, '/files/w/b.txt')).status).toBe(200),
  'move in': (u) => ok(move(u, '/files/outside/e.txt', '/files/w/e.txt')),
  'move out': (u) => ok(move(u, '/files/w/b.txt', '/files/outside/b.txt')),
  'rename a folder': (u) => ok(move(u, '/files/w/sub', '/files/w/renamed')),
  'delete a folder': async (u) => expect((await remove(u, '/files/w/sub', true)).status).toBe(200),
  restore: async (u) => {
    const revs = (await u.request('GET', `/v1/agent/files/revisions?path=${q('/files/w/a.txt')}`)).body.revisions as { revision: string; sha256: string }[];
    const old = revs.find((r) => r.sha256 === sha256('a0'))!;
    expect((await u.request('POST', '/v1/agent/files/restore', { path: '/files/w/a.txt', revision: old.revision })).status).toBe(200);
  },
};

describe('files — checkpoints', () => {
  it('checkpoints — create, get, list newest first, delete; the answer names files and the bytes of distinct contents', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/p/one.txt', 'same');
    await put(stack, u, '/files/p/two.txt', 'same');
    await put(stack, u, '/files/p/three.txt', 'other!');
    const first = await checkpoint(u, { path: '/files/p/', label: 'before' });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toEqual({ checkpointId: expect.stringMatching(CKP), path: '/files/p', label: 'before', createdAt: expect.stringMatching(ISO_MS), files: 3, bytes: 4 + 6 });
    const root = await checkpoint(u);
    expect(root.body).toMatchObject({ path: '/files', label: '' });
    expect((await u.request('GET', `/v1/agent/files/checkpoints/${first.body.checkpointId}`)).body).toEqual(first.body);
    const all = await u.request('GET', '/v1/agent/files/checkpoints');
    expect(all.body.checkpoints.map((c: { checkpointId: string }) => c.checkpointId)).toEqual([root.body.checkpointId, first.body.checkpointId]);
    const below = await u.request('GET', '/v1/agent/files/checkpoints?path=/files/p');
    expect(below.body).toEqual({ checkpoints: [first.body] });
    expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${first.body.checkpointId}`)).status).toBe(204);
    const gone = await u.request('GET', `/v1/agent/files/checkpoints/${first.body.checkpointId}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('CHECKPOINT_NOT_FOUND');
    expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${first.body.checkpointId}`)).body.error.code).toBe('CHECKPOINT_NOT_FOUND');
  });

  it('checkpoints — hostile: another user\'s id is 404 everywhere (get, delete, rewind, fork); bad bodies are 400', async () => {
    const owner = await stack.user();
    const other = await stack.user();
    await put(stack, owner, '/files/secret/s.txt', 'mine');
    const { checkpointId } = await taken(owner, '/files/secret');
    for (const res of [
      await other.request('GET', `/v1/agent/files/checkpoints/${checkpointId}`),
      await other.request('DELETE', `/v1/agent/files/checkpoints/${checkpointId}`),
      await rewind(other, '/files/secret', checkpointId),
      await other.request('POST', '/v1/agent/files/copy', { from: '/files/secret', to: '/files/stolen', at: checkpointId }),
      await other.request('GET', '/v1/agent/files/checkpoints/ckp_NOT-HEX'),
    ]) {
      expect(res.status, res.text).toBe(404);
      expect(res.body.error.code).toBe('CHECKPOINT_NOT_FOUND');
    }
    expect((await other.request('GET', '/v1/agent/files/checkpoints')).body).toEqual({ checkpoints: [] });
    expect(await tree(other, '/files/stolen')).toEqual({});
    expect((await owner.request('GET', `/v1/agent/files/checkpoints/${checkpointId}`)).status, 'still the owner\'s').toBe(200);
    const bad: [Record<string, unknown>, string][] = [
      [{ label: 'x'.repeat(201) }, 'label'],
      [{ path: '/files', extra: 1 }, 'extra'],
      [{ label: 5 }, 'label'],
    ];
    for (const [body, field] of bad) {
      const res = await checkpoint(owner, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    expect((await checkpoint(owner, { path: '/filesx' })).body.error.code).toBe('INVALID_PATH');
    expect((await checkpoint(owner, { path: '/files/nothing/here' })).body.error.code).toBe('FILE_NOT_FOUND');
    for (const to of ['yesterday', '', '2024-13-45', '1700000000']) {
      const res = await rewind(owner, '/files/secret', to);
      expect(res.status, to).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'to' } });
    }
    expect((await owner.request('POST', '/v1/agent/files/rewind', { path: '/files/secret' })).body.error.details.field).toBe('to');
    expect((await owner.request('POST', '/v1/agent/files/move', { from: '/files/secret', to: '/files/x', at: checkpointId })).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'at' } });
  });

  for (const [kind, change] of Object.entries(CHANGES)) {
    for (const by of ['checkpoint', 'time'] as const) {
      it(`rewind — after a ${kind}, to a ${by}, gives exactly the tree of then (paths and sha256)`, async () => {
        const u = await stack.user();
        await seed(u);
        const then = await tree(u, '/files/w');
        const outside = await tree(u, '/files/outside');
        const { checkpointId } = await taken(u, '/files/w');
        const at = await moment();
        await change(u);
        expect(await tree(u, '/files/w'), 'the change changed something').not.toEqual(then);
        const res = await rewind(u, '/files/w', by === 'checkpoint' ? checkpointId : at);
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ success: true, path: '/files/w', to: by === 'checkpoint' ? checkpointId : at, checkpointId: expect.stringMatching(CKP) });
        expect(await tree(u, '/files/w')).toEqual(then);
        for (const p of Object.keys(then)) expect((await read(u, p)).body.content, p).toBeTypeOf('string');
        // Outside the rewound tree nothing changed back: a file moved out stays where it went.
        if (kind === 'move out') expect(Object.keys(await tree(u, '/files/outside'))).toEqual(['/files/outside/b.txt', '/files/outside/e.txt']);
        if (kind === 'move in') expect(await tree(u, '/files/outside')).toEqual({});
        if (kind !== 'move out' && kind !== 'move in') expect(await tree(u, '/files/outside')).toEqual(outside);
      });
    }
  }

  it('rewind — counts restored, removed and unchanged; removed files are in the trash and restorable; a moved file counts twice', async () => {
    const u = await stack.user();
    await seed(u);
    const { checkpointId } = await taken(u, '/files/w');
    await put(stack, u, '/files/w/a.txt', 'changed');
    await put(stack, u, '/files/w/created.txt', 'created');
    await ok(move(u, '/files/w/b.txt', '/files/w/moved.txt'));
    const res = await rewind(u, '/files/w', checkpointId);
    // then: a, b, c, d. now: a (differs), created, moved, c, d.
    expect(res.body).toEqual({ success: true, path: '/files/w', to: checkpointId, restored: 2, removed: 2, unchanged: 2, checkpointId: expect.stringMatching(CKP) });
    const trash = await u.request('GET', '/v1/agent/files/trash?path=/files/w');
    expect(trash.body.entries.map((e: { path: string }) => e.path).sort()).toEqual(['/files/w/created.txt', '/files/w/moved.txt']);
    const back = await u.request('POST', '/v1/agent/files/restore', { path: '/files/w/created.txt', recursive: true });
    expect(back.body).toMatchObject({ restored: 1 });
    expect((await read(u, '/files/w/created.txt')).body.content).toBe('created');
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });

  it('rewind — undone by rewinding to the checkpoint it answered; the rewound tree may be the whole workspace', async () => {
    const u = await stack.user();
    await seed(u);
    const before = await tree(u, '/files');
    const { checkpointId } = await taken(u, '/files');
    await put(stack, u, '/files/w/a.txt', 'edited');
    await remove(u, '/files/outside', true);
    const edited = await tree(u, '/files');
    const first = await rewind(u, '/files', checkpointId);
    expect(first.status, first.text).toBe(200);
    expect(await tree(u, '/files')).toEqual(before);
    const undo = await rewind(u, '/files', first.body.checkpointId);
    expect(undo.status, undo.text).toBe(200);
    expect(await tree(u, '/files')).toEqual(edited);
    const listed = (await u.request('GET', `/v1/agent/files/checkpoints/${first.body.checkpointId}`)).body;
    expect(listed).toMatchObject({ path: '/files', files: Object.keys(edited).length });
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });

  it('rewind — a checkpoint of a tree above the path rewinds only the path; one of another path is 400 (field to); a file above is 409', async () => {
    const u = await stack.user();
    await seed(u);
    const { checkpointId } = await taken(u, '/files');
    await put(stack, u, '/files/w/sub/c.txt', 'c2');
    await put(stack, u, '/files/w/b.txt', 'b2');
    const res = await rewind(u, '/files/w/sub', checkpointId);
    expect(res.body).toMatchObject({ restored: 1, removed: 0, unchanged: 1 });
    expect((await read(u, '/files/w/sub/c.txt')).body.content).toBe('c');
    expect((await read(u, '/files/w/b.txt')).body.content, 'outside the path: untouched').toBe('b2');
    const narrow = await taken(u, '/files/w/sub');
    const wider = await rewind(u, '/files/w', narrow.checkpointId);
    expect(wider.status).toBe(400);
    expect(wider.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'to' } });
    const sibling = await rewind(u, '/files/outside', narrow.checkpointId);
    expect(sibling.body.error.details.field).toBe('to');
    await remove(u, '/files/w', true);
    await put(stack, u, '/files/w', 'a file where the folder was');
    const blocked = await rewind(u, '/files/w/sub', narrow.checkpointId);
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.code).toBe('PATH_CONFLICT');
    expect((await read(u, '/files/w')).body.content, 'a refused rewind changes nothing').toBe('a file where the folder was');
  });

  it('rewind — a time older than FILE_REVISION_DAYS is 410 HISTORY_EXPIRED, for a fork too; a time ahead of the clock is now', async () => {
    const u = await stack.user();
    await seed(u);
    const old = new Date(Date.now() - 31 * 24 * 3600 * 1000).toISOString();
    const res = await rewind(u, '/files/w', old);
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('HISTORY_EXPIRED');
    const fork = await u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/fork', at: old });
    expect(fork.status).toBe(410);
    const before = await tree(u, '/files/w');
    const ahead = await rewind(u, '/files/w', new Date(Date.now() + 3600_000).toISOString());
    expect(ahead.body).toMatchObject({ restored: 0, removed: 0, unchanged: 4 });
    expect(await tree(u, '/files/w')).toEqual(before);
  });

  it('rewind — one `rewound` change in the feed and one file.rewound event', async () => {
    const u = await stack.user();
    const since = new Date(Date.now() - 1_000);
    await seed(u);
    const { checkpointId } = await taken(u, '/files/w');
    await remove(u, '/files/w', true);
    const cursor = (await u.request('GET', '/v1/agent/files/changes/cursor?path=/files/w')).body.cursor;
    const below = (await u.request('GET', '/v1/agent/files/changes/cursor?path=/files/w/sub')).body.cursor;
    const res = await rewind(u, '/files/w', checkpointId);
    expect(res.status).toBe(200);
    expect((await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`)).body.changes).toEqual([{ type: 'rewound', kind: 'directory', path: '/files/w', at: expect.stringMatching(ISO_MS) }]);
    expect((await u.request('GET', `/v1/agent/files/changes?cursor=${q(below)}`)).body.changes).toEqual([{ type: 'rewound', kind: 'directory', path: '/files/w/sub', at: expect.stringMatching(ISO_MS) }]);
    const nats = await testNats();
    try {
      const mine = async () => (await readEvents(nats, { subject: 'files.>', since })).filter((e) => e.data.userId === u.sub && e.type === 'file.rewound');
      await expect.poll(async () => (await mine()).length, { timeout: 30_000, interval: 300 }).toBe(1);
      expect((await mine())[0]!.data).toEqual({ userId: u.sub, path: '/files/w', to: checkpointId, checkpointId: res.body.checkpointId, restored: 4, removed: 0, unchanged: 0 });
    } finally {
      await nats.close();
    }
  });

  it('rewind — a concurrent writer never sees or leaves a mixed tree', async () => {
    const u = await stack.user();
    const names = Array.from({ length: 150 }, (_, i) => `/files/big/f${String(i).padStart(3, '0')}.txt`);
    for (const p of names) await put(stack, u, p, 'old');
    const { checkpointId } = await taken(u, '/files/big');
    await ok(u.request('POST', '/v1/agent/files/copy', { from: '/files/big', to: '/files/newer' }));
    for (const p of names.slice(0, 10)) await put(stack, u, p.replace('/big/', '/newer/'), 'new');
    // Every file of the tree changes in one step: a move of a whole new tree over it.
    await remove(u, '/files/big', true);
    await ok(move(u, '/files/newer', '/files/big'));
    const seen: string[] = [];
    let done = false;
    const watcher = (async () => {
      while (!done) {
        const t = await tree(u, '/files/big');
        // f000 is the writer's: its content is its own.
        const contents = new Set(names.slice(1, 10).map((p) => t[p]));
        seen.push(contents.size === 1 ? [...contents][0]! : 'mixed');
      }
    })();
    const writer = (async () => {
      for (let i = 0; i < 10; i++) await put(stack, u, '/files/big/f000.txt', `writer ${i}`);
    })();
    const res = await rewind(u, '/files/big', checkpointId);
    await writer;
    done = true;
    await watcher;
    expect(res.status, res.text).toBe(200);
    expect(seen.filter((s) => s === 'mixed')).toEqual([]);
    const after = await tree(u, '/files/big');
    expect(Object.keys(after)).toEqual(names);
    for (const p of names.slice(1)) expect(after[p], p).toBe(sha256('old'));
  });
});

describe('files — fork', () => {
  it('fork — copy with `at` (a checkpoint or a time) copies the tree as it was, also when `from` is gone; no bytes copied', async () => {
    const u = await stack.user();
    await seed(u);
    const then = await tree(u, '/files/w');
    const { checkpointId } = await taken(u, '/files/w');
    const at = await moment();
    await put(stack, u, '/files/w/a.txt', 'later');
    await put(stack, u, '/files/w/later.txt', 'later');
    const usage = (await u.request('GET', '/v1/usage')).body.files.bytes;
    const res = await u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/fork1', at: checkpointId });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, from: '/files/w', path: '/files/fork1' });
    const rebase = (t: Record<string, string>, to: string) => Object.fromEntries(Object.entries(t).map(([p, h]) => [p.replace('/files/w', to), h]));
    expect(await tree(u, '/files/fork1')).toEqual(rebase(then, '/files/fork1'));
    expect((await u.request('GET', '/v1/usage')).body.files.bytes, 'a fork stores no new bytes').toBe(usage);
    await remove(u, '/files/w', true);
    const byTime = await u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/fork2', at });
    expect(byTime.status, byTime.text).toBe(200);
    expect(await tree(u, '/files/fork2')).toEqual(rebase(then, '/files/fork2'));
    const one = await u.request('POST', '/v1/agent/files/copy', { from: '/files/w/a.txt', to: '/files/a-then.txt', at });
    expect(one.status, one.text).toBe(200);
    expect((await read(u, '/files/a-then.txt')).body.content).toBe('a1');
    expect((await u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/fork1', at })).body.error.code, 'a directory never merges').toBe('PATH_CONFLICT');
    expect((await u.request('POST', '/v1/agent/files/copy', { from: '/files/w/nothing', to: '/files/x', at })).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await u.request('POST', '/v1/agent/files/copy', { from: '/files/outside', to: '/files/x', at: checkpointId })).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'at' } });
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });
});

describe('files — checkpoint retention and quotas', () => {
  it('retention — a checkpoint keeps the revisions it names past FILE_REVISIONS: readable, downloadable, and what a rewind brings back', async () => {
    const u = await stack.user();
    const first = await put(stack, u, '/files/r/f.txt', 'the very first');
    const { checkpointId } = await taken(u, '/files/r');
    const [{ revision }] = (await u.request('GET', `/v1/agent/files/revisions?path=${q('/files/r/f.txt')}`)).body.revisions;
    for (let i = 0; i < 5; i++) await put(stack, u, '/files/r/f.txt', `later ${i}`);
    await put(stack, u, '/files/r/g.txt', 'g');
    // Several sweeps: trimmed revisions' bytes would be gone by now.
    await new Promise((r) => setTimeout(r, 1_500));
    const old = await u.request('GET', `/v1/agent/files/read?path=${q('/files/r/f.txt')}&revision=${revision}`);
    expect(old.status, old.text).toBe(200);
    expect(old.body.content).toBe('the very first');
    const res = await rewind(u, '/files/r', checkpointId);
    expect(res.body).toMatchObject({ restored: 1, removed: 1, unchanged: 0 });
    const got = await download(stack.url, u, '/files/r/f.txt');
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe('the very first');
    expect(sha256(got.bytes)).toBe(first.sha256);
    // Deleted, the checkpoint no longer keeps it: the path's own history (3 records) decides again.
    expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${checkpointId}`)).status).toBe(204);
    for (let i = 0; i < 4; i++) await put(stack, u, '/files/r/f.txt', `again ${i}`);
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/r/f.txt')}&revision=${revision}`)).status).toBe(404);
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });

  it('quota — a checkpoint\'s bytes count once: usage does not grow when it is taken, and /v1/usage reports checkpoints and their bytes', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/q/a.bin', 'x'.repeat(1000));
    await put(stack, u, '/files/q/b.bin', 'x'.repeat(1000));
    await put(stack, u, '/files/q/c.bin', 'y'.repeat(500));
    const before = (await u.request('GET', '/v1/usage')).body;
    expect(before.checkpoints).toEqual({ count: 0, bytes: 0, limit: 6 });
    const c1 = await taken(u, '/files/q');
    const c2 = await taken(u, '/files/q');
    expect(c1.bytes).toBe(1500);
    const after = (await u.request('GET', '/v1/usage')).body;
    expect(after.files.bytes).toBe(before.files.bytes);
    expect(after.checkpoints).toEqual({ count: 2, bytes: 1500, limit: 6 });
    await remove(u, '/files/q', true);
    expect((await u.request('GET', '/v1/usage')).body.files.bytes, 'trash and checkpoints hold the same bytes: once').toBe(before.files.bytes);
    expect((await auditIndex(stack, u)).problems).toEqual([]);
    await u.request('DELETE', `/v1/agent/files/checkpoints/${c1.checkpointId}`);
    await u.request('DELETE', `/v1/agent/files/checkpoints/${c2.checkpointId}`);
    expect((await u.request('GET', '/v1/usage')).body.checkpoints).toEqual({ count: 0, bytes: 0, limit: 6 });
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });

  it('quota — at most MAX_CHECKPOINTS per user (the checkpoint a rewind takes counts): 403 QUOTA_EXCEEDED, and a delete frees a place', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/m/x.txt', 'x');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await taken(u, '/files/m', `n${i}`)).checkpointId);
    const r = await rewind(u, '/files/m', ids[0]!);
    expect(r.status, r.text).toBe(200);
    const over = await checkpoint(u, { path: '/files/m' });
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_CHECKPOINTS', limit: 6, used: 6 } });
    const refused = await rewind(u, '/files/m', ids[0]!);
    expect(refused.status).toBe(403);
    const other = await stack.user();
    expect((await checkpoint(other)).status, 'per user').toBe(201);
    expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${ids[1]}`)).status).toBe(204);
    expect((await checkpoint(u, { path: '/files/m' })).status).toBe(201);
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });
});

describe('checkpoints and explicit folders', () => {
  it('checkpoints — a tree holding explicit folders: checkpoint, rewind and fork answer, no entry gets an empty name, and the files come back exactly', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/x/a.txt', 'a');
    expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/x/empty' })).status).toBe(201);
    expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/x/kept/inner' })).status).toBe(201);
    const before = await tree(u, '/files/x');
    const c = await taken(u, '/files/x');
    expect(c.files).toBe(1);
    await put(stack, u, '/files/x/empty/new.txt', 'n');
    await put(stack, u, '/files/x/a.txt', 'changed');
    const back = await rewind(u, '/files/x', c.checkpointId);
    expect(back.status, back.text).toBe(200);
    expect(await tree(u, '/files/x')).toEqual(before);
    const listed = await u.request('GET', `/v1/agent/files?path=${q('/files/x')}&recursive=true`);
    expect(listed.status).toBe(200);
    for (const e of listed.body.entries as { path: string; name: string }[]) {
      expect(e.name, e.path).not.toBe('');
      expect(e.path.endsWith('/'), e.path).toBe(false);
    }
    const fork = await u.request('POST', '/v1/agent/files/copy', { from: '/files/x', to: '/files/x-fork', at: c.checkpointId });
    expect(fork.status, fork.text).toBe(200);
    expect(Object.keys(await tree(u, '/files/x-fork'))).toEqual(['/files/x-fork/a.txt']);
    expect(await folders(u, '/files/x-fork'), 'the fork holds the explicit folders of then').toEqual(['/files/x-fork/empty', '/files/x-fork/kept', '/files/x-fork/kept/inner']);
  });

  for (const by of ['checkpoint', 'time'] as const) {
    it(`rewind and fork to a ${by} — explicit empty folders are part of the tree: deleted since, they are listed again, empty; made since, they are gone; a fork holds them; the counts are of files`, async () => {
      const u = await stack.user();
      const mkdir = async (path: string) => expect((await u.request('POST', '/v1/agent/files/directories', { path })).status).toBe(201);
      await put(stack, u, '/files/ef/a.txt', 'a');
      await mkdir('/files/ef/kept');
      await mkdir('/files/ef/gone/inner');
      const c = await taken(u, '/files/ef');
      const at = await moment();
      expect((await remove(u, '/files/ef/gone', true)).status).toBe(200);
      await mkdir('/files/ef/made/since');
      const to = by === 'checkpoint' ? c.checkpointId : at;
      const res = await rewind(u, '/files/ef', to);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ restored: 0, removed: 0, unchanged: 1 });
      expect(await folders(u, '/files/ef')).toEqual(['/files/ef/gone', '/files/ef/gone/inner', '/files/ef/kept']);
      expect(await list(u, '/files/ef/gone/inner')).toEqual([]);
      expect((await u.request('GET', `/v1/agent/files?path=${q('/files/ef/made')}`)).status).toBe(404);
      // Explicit again: an empty one goes without recursive, and the one above it stays.
      expect((await remove(u, '/files/ef/gone/inner')).status).toBe(200);
      expect(await list(u, '/files/ef/gone')).toEqual([]);
      expect((await auditIndex(stack, u)).problems).toEqual([]);
      // The undo gives back the folders as they were before the rewind.
      const undo = await rewind(u, '/files/ef', res.body.checkpointId);
      expect(undo.status, undo.text).toBe(200);
      expect(await folders(u, '/files/ef')).toEqual(['/files/ef/kept', '/files/ef/made', '/files/ef/made/since']);
      // A fork of the tree of then holds them, also once `from` is gone.
      expect((await remove(u, '/files/ef', true)).status).toBe(200);
      const fork = await u.request('POST', '/v1/agent/files/copy', { from: '/files/ef', to: '/files/ef-fork', at: to });
      expect(fork.status, fork.text).toBe(200);
      expect(Object.keys(await tree(u, '/files/ef-fork'))).toEqual(['/files/ef-fork/a.txt']);
      expect(await folders(u, '/files/ef-fork')).toEqual(['/files/ef-fork/gone', '/files/ef-fork/gone/inner', '/files/ef-fork/kept']);
      expect(await list(u, '/files/ef-fork/gone/inner')).toEqual([]);
      expect((await remove(u, '/files/ef-fork/gone/inner')).status, 'explicit in the fork too').toBe(200);
      expect((await auditIndex(stack, u)).problems).toEqual([]);
    });
  }
});

/** Every folder at or below `path` (below it, as a recursive listing shows them). */
async function folders(u: ApiUser, path: string): Promise<string[]> {
  return (await list(u, path, { recursive: true })).filter((e) => e.type === 'directory').map((e) => e.path);
}
