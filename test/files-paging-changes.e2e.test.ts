import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { byteOrder, copy, download, ISO_MS, list, listPaged, move, ok, pool, put, sha256, SHA256, type Entry } from './support/files-api.js';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
const paths = (entries: Entry[]) => entries.map((e) => e.path);

interface Change {
  type: 'created' | 'updated' | 'deleted' | 'moved';
  kind: 'file' | 'directory';
  path: string;
  at: string;
  from?: string;
  size?: number;
  sha256?: string;
}

async function changesCursor(u: ApiUser, path?: string): Promise<string> {
  const res = await u.request('GET', `/v1/agent/files/changes/cursor${path === undefined ? '' : `?path=${q(path)}`}`);
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body)).toEqual(['cursor']);
  expect(typeof res.body.cursor).toBe('string');
  return res.body.cursor;
}

async function changes(u: ApiUser, cursor: string, options: { limit?: number; timeout?: number } = {}): Promise<{ changes: Change[]; cursor: string; hasMore: boolean }> {
  const extra = `${options.limit === undefined ? '' : `&limit=${options.limit}`}${options.timeout === undefined ? '' : `&timeout=${options.timeout}`}`;
  const res = await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}${extra}`);
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body.changes)).toBe(true);
  expect(typeof res.body.cursor).toBe('string');
  expect(typeof res.body.hasMore).toBe('boolean');
  return res.body;
}

/** Every change after `cursor`, following pages until hasMore is false. */
async function drain(u: ApiUser, cursor: string, limit = 1000): Promise<{ changes: Change[]; cursor: string }> {
  const all: Change[] = [];
  for (;;) {
    const page = await changes(u, cursor, { limit });
    all.push(...page.changes);
    cursor = page.cursor;
    if (!page.hasMore) return { changes: all, cursor };
  }
}

const at = expect.stringMatching(ISO_MS);
const fileChange = (type: 'created' | 'updated', path: string, content: string) => ({ type, kind: 'file', path, at, size: Buffer.byteLength(content), sha256: sha256(content) });

describe('files — sha256 and ETags', () => {
  it('sha256 — upload responses and file entries carry the sha256 of the bytes; directories and includeStats=false do not', async () => {
    const u = await stack.user();
    const content = 'héllo, sha\n';
    const res = await upload(stack.url, u, { filename: 'h.txt', content }, { path: '/files/s/' });
    expect(res.body).toEqual({ success: true, path: '/files/s/h.txt', size: Buffer.byteLength(content), mimeType: 'text/plain', sha256: sha256(content) });
    const empty = await upload(stack.url, u, { filename: 'empty.txt', content: '' }, { path: '/files/s/' });
    expect(empty.body.sha256).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    await put(stack, u, '/files/s/sub/deeper.bin', Buffer.from([0, 1, 2, 255]));
    const entries = await list(u, '/files/s', { recursive: true });
    expect(entries).toEqual([
      { path: '/files/s/empty.txt', name: 'empty.txt', type: 'file', size: 0, modifiedAt: at, mimeType: 'text/plain', sha256: sha256('') },
      { path: '/files/s/h.txt', name: 'h.txt', type: 'file', size: Buffer.byteLength(content), modifiedAt: at, mimeType: 'text/plain', sha256: sha256(content) },
      { path: '/files/s/sub', name: 'sub', type: 'directory' },
      { path: '/files/s/sub/deeper.bin', name: 'deeper.bin', type: 'file', size: 4, modifiedAt: at, mimeType: 'application/octet-stream', sha256: sha256(Buffer.from([0, 1, 2, 255])) },
    ]);
    for (const e of entries.filter((x) => x.type === 'file')) expect(e.sha256).toMatch(SHA256);
    expect(await list(u, '/files/s', { includeStats: false })).toEqual([
      { path: '/files/s/empty.txt', name: 'empty.txt', type: 'file' },
      { path: '/files/s/h.txt', name: 'h.txt', type: 'file' },
      { path: '/files/s/sub', name: 'sub', type: 'directory' },
    ]);
  });

  it('etag — a download\'s ETag is "<sha256>": equal bytes have equal ETags, different bytes different ones', async () => {
    const u = await stack.user();
    const a = await put(stack, u, '/files/a.txt', 'same bytes');
    await put(stack, u, '/files/elsewhere/b.md', 'same bytes');
    await put(stack, u, '/files/c.txt', 'other bytes');
    const da = await download(stack.url, u, '/files/a.txt');
    const db = await download(stack.url, u, '/files/elsewhere/b.md');
    const dc = await download(stack.url, u, '/files/c.txt');
    expect(da.headers.get('etag')).toBe(`"${a.sha256}"`);
    expect(db.headers.get('etag')).toBe(da.headers.get('etag'));
    expect(dc.headers.get('etag')).toBe(`"${sha256('other bytes')}"`);
    // An ETag known from one file validates another with the same bytes.
    expect((await download(stack.url, u, '/files/elsewhere/b.md', { 'if-none-match': da.headers.get('etag')! })).status).toBe(304);
    await put(stack, u, '/files/a.txt', 'changed');
    const changed = await download(stack.url, u, '/files/a.txt', { 'if-none-match': `"${a.sha256}"` });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toBe(`"${sha256('changed')}"`);
  });
});

describe('files — paging a listing', () => {
  // Byte order puts ' ', '-' and '.' (0x20, 0x2d, 0x2e) before '/' (0x2f): a tree walk would not.
  const TREE = ['/files/pg/a/x', '/files/pg/a b', '/files/pg/a-c', '/files/pg/a.d', '/files/pg/a0', '/files/pg/B', '/files/pg/z/é', '/files/pg/z/😀', '/files/pg/z/ｚ', '/files/pg/~'];
  const ORDER = ['/files/pg/B', '/files/pg/a', '/files/pg/a b', '/files/pg/a-c', '/files/pg/a.d', '/files/pg/a/x', '/files/pg/a0', '/files/pg/z', '/files/pg/z/é', '/files/pg/z/ｚ', '/files/pg/z/😀', '/files/pg/~'];

  it('paging — limit, cursor and hasMore walk the listing in byte order; the pages add up to the unpaged listing', async () => {
    const u = await stack.user();
    await pool(TREE, 4, (p) => put(stack, u, p, p));
    const whole = await list(u, '/files/pg', { recursive: true });
    expect(paths(whole)).toEqual(ORDER);
    for (const limit of [1, 2, 5, 11, 12, 13, 10_000]) {
      const paged = await listPaged(u, '/files/pg', limit, { recursive: true });
      expect(paged.entries, `limit=${limit}`).toEqual(whole);
      expect(paged.pages, `limit=${limit}`).toBe(Math.max(1, Math.ceil(ORDER.length / limit)));
    }
    const shallow = await listPaged(u, '/files/pg', 3, { includeStats: false });
    expect(shallow.entries).toEqual(await list(u, '/files/pg', { includeStats: false }));
    expect(shallow.entries.every((e) => Object.keys(e).sort().join() === 'name,path,type')).toBe(true);

    const first = await u.request('GET', '/v1/agent/files?path=/files/pg&recursive=true&limit=5');
    expect(first.body).toEqual({ path: '/files/pg', recursive: true, entries: whole.slice(0, 5), cursor: expect.any(String), hasMore: true });
    // Only a cursor: the default limit (1,000) takes the rest.
    const rest = await u.request('GET', `/v1/agent/files?path=/files/pg&recursive=true&cursor=${q(first.body.cursor)}`);
    expect(rest.body).toMatchObject({ entries: whole.slice(5), cursor: null, hasMore: false });
    const oneFile = await u.request('GET', `/v1/agent/files?path=${q('/files/pg/a b')}&limit=1`);
    expect(oneFile.body, 'a file pages as its one entry').toMatchObject({ entries: [expect.objectContaining({ path: '/files/pg/a b', type: 'file' })], cursor: null, hasMore: false });
    const unpaged = await u.request('GET', '/v1/agent/files?path=/files/pg');
    expect(unpaged.body).not.toHaveProperty('cursor');
    expect(unpaged.body).not.toHaveProperty('hasMore');
  });

  it('paging — limit outside 1–10,000 is 400 INVALID_ARGUMENT (field limit)', async () => {
    const u = await stack.user();
    for (const limit of ['0', '10001', '-1', 'ten', '1.5', '']) {
      const res = await u.request('GET', `/v1/agent/files?limit=${limit}`);
      expect(res.status, `limit=${limit}`).toBe(400);
      expect(res.body.error, `limit=${limit}`).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'limit' } });
    }
    expect((await u.request('GET', '/v1/agent/files?limit=10000')).status).toBe(200);
  });

  it('paging — entries that exist throughout are listed exactly once while others come and go between pages', async () => {
    const u = await stack.user();
    const keep = Array.from({ length: 40 }, (_, i) => `/files/churn/k${String(i).padStart(2, '0')}`);
    const gone = Array.from({ length: 20 }, (_, i) => `/files/churn/g${String(i).padStart(2, '0')}`);
    await pool([...keep, ...gone], 4, (p) => put(stack, u, p, p));
    const added: string[] = [];
    let g = 0;
    const { entries } = await listPaged(u, '/files/churn', 6, {
      between: async (page) => {
        // Before and after the position reached, and at both ends: deletes, uploads and moves.
        const victim = gone[(g++ * 7) % gone.length]!;
        if ((await u.request('DELETE', `/v1/agent/files?path=${q(victim)}`)).status === 404) return;
        const front = `/files/churn/a${page}`;
        const back = `/files/churn/z${page}`;
        const mid = `/files/churn/k${String(page * 6).padStart(2, '0')}x`;
        await put(stack, u, front, 'new');
        await put(stack, u, back, 'new');
        await put(stack, u, mid, 'new');
        added.push(front, back, mid);
        const mover = gone[(g++ * 7) % gone.length]!;
        if ((await move(u, mover, `${mover}-moved`)).status === 200) added.push(`${mover}-moved`);
      },
    });
    const listed = paths(entries);
    expect(new Set(listed).size, 'no entry twice').toBe(listed.length);
    expect(listed, 'byte order across pages').toEqual([...listed].sort(byteOrder));
    expect(keep.filter((k) => listed.filter((p) => p === k).length !== 1), 'entries that existed throughout').toEqual([]);
    const known = new Set([...keep, ...gone, ...added]);
    expect(listed.filter((p) => !known.has(p))).toEqual([]);
    expect(added.length).toBeGreaterThan(6);
  });

  it('paging — a cursor that is altered, foreign to the user, or for another path is 400 INVALID_ARGUMENT (field cursor)', async () => {
    const a = await stack.user();
    const b = await stack.user();
    for (const u of [a, b]) for (const p of ['/files/p/1', '/files/p/2', '/files/p/3', '/files/other/1']) await put(stack, u, p, p);
    const page = await a.request('GET', '/v1/agent/files?path=/files/p&limit=1');
    const cursor: string = page.body.cursor;
    expect(typeof cursor).toBe('string');
    expect((await a.request('GET', `/v1/agent/files?path=/files/p&limit=1&cursor=${q(cursor)}`)).body.entries).toEqual([expect.objectContaining({ path: '/files/p/2' })]);
    const mid = Math.floor(cursor.length / 2);
    const altered = [
      `${cursor.slice(0, mid)}${cursor[mid] === 'A' ? 'B' : 'A'}${cursor.slice(mid + 1)}`,
      cursor.slice(0, mid),
      Buffer.from(cursor).reverse().toString(),
      'eyJwYXRoIjoiL2ZpbGVzL3AiLCJhZnRlciI6Ii9maWxlcy9wLzEifQ',
      'not a cursor',
    ];
    for (const bad of altered) {
      const res = await a.request('GET', `/v1/agent/files?path=/files/p&limit=1&cursor=${q(bad)}`);
      expect(res.status, `cursor ${bad}`).toBe(400);
      expect(res.body.error, `cursor ${bad}`).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'cursor' } });
    }
    const foreign = await b.request('GET', `/v1/agent/files?path=/files/p&limit=1&cursor=${q(cursor)}`);
    expect(foreign.status, 'another user\'s cursor').toBe(400);
    expect(foreign.body.error.details.field).toBe('cursor');
    const otherPath = await a.request('GET', `/v1/agent/files?path=/files/other&limit=1&cursor=${q(cursor)}`);
    expect(otherPath.status, 'a cursor of another path').toBe(400);
    expect(otherPath.body.error.details.field).toBe('cursor');
  });
});

describe('files — changes', () => {
  it('changes — the cursor route: any path, even one that does not exist; invalid paths are 400; a fresh cursor has nothing after it', async () => {
    const u = await stack.user();
    await u.request('GET', '/v1/agent/files');
    const root = await changesCursor(u);
    expect(await changesCursor(u, '/files/not/there/yet')).toEqual(expect.any(String));
    expect(await changesCursor(u, '/files')).toEqual(expect.any(String));
    for (const bad of ['/filesx', '/files//a', 'relative']) {
      const res = await u.request('GET', `/v1/agent/files/changes/cursor?path=${q(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('INVALID_PATH');
    }
    expect(await changes(u, root)).toMatchObject({ changes: [], hasMore: false });
  });

  it('changes — one record per operation, in commit order: created/updated with size and sha256, moved with from, a recursive delete is one deleted directory', async () => {
    const u = await stack.user();
    const cursor = await changesCursor(u, '/files/c');
    await put(stack, u, '/files/c/a.txt', 'one');
    await put(stack, u, '/files/c/a.txt', 'two!');
    await put(stack, u, '/files/c/d/x.txt', 'x'); // its parent directory appears with it: one change
    await put(stack, u, '/files/c/d/y.txt', 'yy');
    expect((await upload(stack.url, u, { filename: 'a.txt', content: 'refused' }, { path: '/files/c/' })).status, 'a refused upload changes nothing').toBe(409);
    await ok(move(u, '/files/c/a.txt', '/files/c/b.md'));
    await ok(move(u, '/files/c/d', '/files/c/e'));
    expect((await move(u, '/files/c/e', '/files/c/b.md')).status, 'a refused move changes nothing').toBe(409);
    await ok(copy(u, '/files/c/e', '/files/c/f'));
    await ok(copy(u, '/files/c/b.md', '/files/c/c.md'));
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/c/c.md')).status).toBe(200);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/c/f&recursive=true')).status).toBe(200);
    await ok(move(u, '/files/c/e/x.txt', '/files/c/b.md', 'overwrite'));
    const got = await drain(u, cursor);
    expect(got.changes).toEqual([
      fileChange('created', '/files/c/a.txt', 'one'),
      fileChange('updated', '/files/c/a.txt', 'two!'),
      fileChange('created', '/files/c/d/x.txt', 'x'),
      fileChange('created', '/files/c/d/y.txt', 'yy'),
      { type: 'moved', kind: 'file', path: '/files/c/b.md', from: '/files/c/a.txt', at },
      { type: 'moved', kind: 'directory', path: '/files/c/e', from: '/files/c/d', at },
      { type: 'created', kind: 'directory', path: '/files/c/f', at },
      fileChange('created', '/files/c/c.md', 'two!'),
      { type: 'deleted', kind: 'file', path: '/files/c/c.md', at },
      { type: 'deleted', kind: 'directory', path: '/files/c/f', at },
      { type: 'moved', kind: 'file', path: '/files/c/b.md', from: '/files/c/e/x.txt', at },
    ]);
    expect(await changes(u, got.cursor), 'the answer\'s cursor continues after the last change').toMatchObject({ changes: [], hasMore: false });
  });

  it('changes — limit pages the feed; hasMore says there is more; out-of-range parameters are 400', async () => {
    const u = await stack.user();
    const cursor = await changesCursor(u, '/files/l');
    for (let i = 0; i < 5; i++) await put(stack, u, `/files/l/${i}.txt`, String(i));
    const p1 = await changes(u, cursor, { limit: 2 });
    const p2 = await changes(u, p1.cursor, { limit: 2 });
    const p3 = await changes(u, p2.cursor, { limit: 2 });
    expect([p1, p2, p3].map((p) => [p.changes.map((c) => c.path), p.hasMore])).toEqual([
      [['/files/l/0.txt', '/files/l/1.txt'], true],
      [['/files/l/2.txt', '/files/l/3.txt'], true],
      [['/files/l/4.txt'], false],
    ]);
    expect((await changes(u, cursor, { limit: 10 })).changes.map((c) => c.path), 'a cursor can be read again').toHaveLength(5);
    const bad: [string, string][] = [
      [`cursor=${q(cursor)}&limit=0`, 'limit'],
      [`cursor=${q(cursor)}&limit=10001`, 'limit'],
      [`cursor=${q(cursor)}&timeout=61`, 'timeout'],
      [`cursor=${q(cursor)}&timeout=-1`, 'timeout'],
      ['limit=5', 'cursor'],
      ['cursor=garbage', 'cursor'],
    ];
    for (const [query, field] of bad) {
      const res = await u.request('GET', `/v1/agent/files/changes?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
  });

  it('changes — a cursor on a path: moves in are created, moves out deleted, moves within moved; siblings sharing a prefix are not reported', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/out/x.txt', 'x');
    await put(stack, u, '/files/out/dir/y.txt', 'y');
    const cursor = await changesCursor(u, '/files/P');
    await put(stack, u, '/files/P2/not-mine.txt', 'sibling'); // shares the prefix "/files/P"
    await put(stack, u, '/files/elsewhere.txt', 'outside');
    await ok(move(u, '/files/out/x.txt', '/files/P/x.txt'));
    await ok(move(u, '/files/out/dir', '/files/P/dir'));
    await ok(move(u, '/files/P/x.txt', '/files/P/sub/x2.txt'));
    await ok(move(u, '/files/P/dir', '/files/P2/dir'));
    await ok(copy(u, '/files/P/sub/x2.txt', '/files/P2/copy.txt'));
    await ok(copy(u, '/files/P2/copy.txt', '/files/P/back.txt'));
    await ok(move(u, '/files/P', '/files/Q'));
    const got = await drain(u, cursor);
    expect(got.changes).toEqual([
      fileChange('created', '/files/P/x.txt', 'x'),
      { type: 'created', kind: 'directory', path: '/files/P/dir', at },
      { type: 'moved', kind: 'file', path: '/files/P/sub/x2.txt', from: '/files/P/x.txt', at },
      { type: 'deleted', kind: 'directory', path: '/files/P/dir', at },
      fileChange('created', '/files/P/back.txt', 'x'),
      { type: 'deleted', kind: 'directory', path: '/files/P', at },
    ]);
  });

  it('changes — a long poll waits up to its timeout, and returns as soon as a change arrives', async () => {
    const u = await stack.user();
    const cursor = await changesCursor(u, '/files/lp');
    const t0 = Date.now();
    const idle = await changes(u, cursor, { timeout: 2 });
    expect(Date.now() - t0, 'waited for the timeout').toBeGreaterThanOrEqual(1900);
    expect(idle).toMatchObject({ changes: [], hasMore: false });
    const t1 = Date.now();
    expect((await changes(u, idle.cursor)).changes).toEqual([]);
    expect(Date.now() - t1, 'timeout defaults to 0').toBeLessThan(1500);

    const started = Date.now();
    const polled = changes(u, idle.cursor, { timeout: 30 });
    // Give the poll time to park before the change it waits for (nothing to await on our side).
    await sleep(500);
    await put(stack, u, '/files/lp/wake.txt', 'wake up');
    const uploaded = Date.now();
    const woke = await polled;
    const answered = Date.now();
    expect(woke.changes).toEqual([fileChange('created', '/files/lp/wake.txt', 'wake up')]);
    expect(answered - uploaded, 'answered as soon as the change arrived').toBeLessThan(3000);
    expect(answered - started).toBeLessThan(10_000);
    expect((await changes(u, woke.cursor)).changes).toEqual([]);
  });

  it('changes — a long poll whose client goes away is normal: logged at debug, never as an error', async () => {
    const gw = await stack.extraGateway({ LOG_LEVEL: 'debug' });
    try {
      const u = await stack.user();
      const cursor = await changesCursor(u, '/files/gone');
      const ids = [0, 1, 2].map((i) => `gone-poll-${Date.now()}-${i}`);
      for (const id of ids) {
        const client = new AbortController();
        const poll = fetch(`${gw.url}/v1/agent/files/changes?cursor=${q(cursor)}&timeout=30`, { headers: { authorization: `Bearer ${u.token}`, 'x-request-id': id }, signal: client.signal });
        // Let the poll park, then leave.
        await sleep(500);
        client.abort();
        await expect(poll).rejects.toThrow();
      }
      const linesOf = (id: string) => gw.logs.filter((l) => l.requestId === id);
      // Each is logged once the gateway has dealt with it: at debug, with nothing above info.
      const settled = (id: string) => linesOf(id).some((l) => l.msg === 'client went away' || l.level === 'error' || l.level === 'warn');
      for (const id of ids) await expect.poll(() => settled(id), { timeout: 10_000 }).toBe(true);
      for (const id of ids) {
        expect(linesOf(id).filter((l) => l.level === 'error' || l.level === 'warn'), id).toEqual([]);
        expect(linesOf(id).filter((l) => l.msg === 'client went away').map((l) => l.level), id).toEqual(['debug']);
      }
      // A poll that stays is answered as usual.
      const stayed = await fetch(`${gw.url}/v1/agent/files/changes?cursor=${q(cursor)}&timeout=1`, { headers: { authorization: `Bearer ${u.token}` } });
      expect(stayed.status).toBe(200);
      expect(gw.logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await gw.stop();
    }
  });

  it('changes — a reader sees every change exactly once, in commit order, while two uploaders write concurrently', async () => {
    const u = await stack.user();
    const cursor = await changesCursor(u, '/files/w');
    const N = 30;
    const writer = async (w: string) => {
      for (let i = 0; i < N; i++) {
        const path = `/files/w/${w}/${String(i).padStart(2, '0')}.txt`;
        await put(stack, u, path, `${w} ${i}`, 'error');
        if (i % 10 === 9) await put(stack, u, path, `${w} ${i} again`);
      }
    };
    const expected = 2 * (N + N / 10);
    const seen: Change[] = [];
    let position = cursor;
    let writersDone = false;
    // Reads while the writers write; once they are done, until the feed has nothing more.
    const reader = async () => {
      for (;;) {
        const done = writersDone;
        const page = await changes(u, position, { limit: 7, timeout: done ? 0 : 2 });
        seen.push(...page.changes);
        position = page.cursor;
        if (done && page.changes.length === 0 && !page.hasMore) return;
      }
    };
    const writers = Promise.all([writer('one'), writer('two')]).then(() => {
      writersDone = true;
    });
    await Promise.all([writers, reader()]);
    expect((await changes(u, position)).changes, 'nothing after the last one').toEqual([]);
    expect(seen).toHaveLength(expected);
    for (const w of ['one', 'two']) {
      const mine = seen.filter((c) => c.path.startsWith(`/files/w/${w}/`)).map((c) => `${c.type} ${c.path.slice(-6)}`);
      const want: string[] = [];
      for (let i = 0; i < N; i++) {
        want.push(`created ${String(i).padStart(2, '0')}.txt`);
        if (i % 10 === 9) want.push(`updated ${String(i).padStart(2, '0')}.txt`);
      }
      expect(mine, `each writer's changes once each, in its order (${w})`).toEqual(want);
    }
    // The order is the commit order: a second reader from the same cursor gets the same sequence.
    const again = await drain(u, cursor, 13);
    expect(again.changes).toEqual(seen);
  });
});
