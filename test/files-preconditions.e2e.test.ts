import { beforeAll, describe, expect, it } from 'vitest';
import { tenantKey, userTag } from '@workspace/platform';
import { multipart, q } from './support/files.js';
import { list, put, read, sha256, stat } from './support/files-api.js';
import { testRedis } from './support/backends.js';
import { auditIndex, storedObjects } from './support/files-index-check.js';
import { request, sharedStack, type ApiResponse, type ApiUser, type SharedStack } from './support/stack.js';

/**
 * File preconditions (docs/api/files.md#preconditions): If-Match / If-None-Match on uploads
 * (multipart and tus), deletes, moves, copies and restores, decided in the change's own atomic
 * step: a failure is 412 PRECONDITION_FAILED with details.currentSha256 and changes nothing.
 */

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});

const etag = (sha: string) => `"${sha}"`;

/** A multipart upload of `content` to the file path `path`, with extra request headers. */
function formUpload(u: ApiUser, path: string, content: string, headers: Record<string, string> = {}, onConflict?: string): Promise<ApiResponse> {
  const { contentType, body } = multipart([
    { name: 'path', value: path },
    ...(onConflict === undefined ? [] : [{ name: 'onConflict', value: onConflict }]),
    { name: 'file', filename: 'f.bin', content: Buffer.from(content) },
  ]);
  return request(`${stack.url}/v1/agent/files/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.token}`, 'content-type': contentType, ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const tusHeaders = (u: ApiUser) => ({ authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' });

/** tus creation with `metadata` (ifMatch, ifNoneMatch, …); → the answer and the upload URL. */
async function tusCreate(u: ApiUser, path: string, size: number, metadata: Record<string, string | null> = {}): Promise<{ res: ApiResponse; url: string | null }> {
  const meta = Object.entries({ path, ...metadata })
    .map(([k, v]) => (v === null ? k : `${k} ${b64(v)}`))
    .join(',');
  const res = await request(`${stack.url}/v1/agent/files/uploads`, { method: 'POST', headers: { ...tusHeaders(u), 'upload-length': String(size), 'upload-metadata': meta } });
  return { res, url: res.headers.get('location') };
}
const tusPatch = (u: ApiUser, url: string, content: string): Promise<ApiResponse> =>
  request(url, { method: 'PATCH', headers: { ...tusHeaders(u), 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: content });

/** A whole tus upload: creation, then one PATCH with every byte. → the answer that decided it. */
async function tusUpload(u: ApiUser, path: string, content: string, metadata: Record<string, string | null> = {}): Promise<ApiResponse> {
  const created = await tusCreate(u, path, Buffer.byteLength(content), metadata);
  if (created.res.status !== 201 || !created.url) return created.res;
  return tusPatch(u, created.url, content);
}

function expect412(res: ApiResponse, currentSha256: string | null, what = ''): void {
  expect(res.status, `${what} ${res.text}`).toBe(412);
  expect(res.body.error.code, what).toBe('PRECONDITION_FAILED');
  expect(res.body.error.details, what).toEqual({ currentSha256 });
  expect(res.text, what).toContain(`"currentSha256":${currentSha256 === null ? 'null' : `"${currentSha256}"`}`);
}

function expect400(res: ApiResponse, field: string, what = ''): void {
  expect(res.status, `${what} ${res.text}`).toBe(400);
  expect(res.body.error, what).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
}

/** What a refused upload must not leave: a pending upload, a reservation, an upload slot or an object no file references. */
async function leftovers(u: ApiUser): Promise<{ pending: number; reserved: number; slots: number; stray: string[]; problems: string[] }> {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const P = `{u:${tenantKey(u.sub)}}:fs:${bucket}:`;
  const redis = testRedis('preconditions-leftovers');
  try {
    const [pending, slots, garbage] = await Promise.all([redis.hlen(`${P}up`), redis.zcard(`gateway:uploads:${userTag(u.sub)}`), redis.zrange(`${P}gc`, '0', '-1')]);
    const audit = await auditIndex(stack, u);
    const queued = new Set(garbage);
    const referenced = new Set(audit.referenced);
    const stray = (await storedObjects(stack, u)).filter((key) => !referenced.has(key) && !queued.has(key));
    return { pending, reserved: audit.reserved.total, slots, stray, problems: audit.problems };
  } finally {
    await redis.quit();
  }
}
async function expectNothingLeft(u: ApiUser): Promise<void> {
  await expect.poll(() => leftovers(u), { timeout: 15_000 }).toEqual({ pending: 0, reserved: 0, slots: 0, stray: [], problems: [] });
}

const content = async (u: ApiUser, path: string) => (await read(u, path)).body.content as string | undefined;

describe('preconditions — uploads over multipart', () => {
  it('If-Match that holds replaces the file whatever onConflict says (error, uuid)', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/doc.md', 'one');
    const res = await formUpload(u, '/files/doc.md', 'two', { 'if-match': etag(v1.sha256) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ path: '/files/doc.md', sha256: sha256('two') });
    const uuid = await formUpload(u, '/files/doc.md', 'three', { 'if-match': etag(sha256('two')) }, 'uuid');
    expect(uuid.status, uuid.text).toBe(200);
    expect(uuid.body.path, 'a matching If-Match replaces, it never renames').toBe('/files/doc.md');
    expect(await content(u, '/files/doc.md')).toBe('three');
    // The ETag of a download is the If-Match of the next write.
    const dl = await fetch(`${stack.url}/v1/agent/files/download?path=${q('/files/doc.md')}`, { headers: { authorization: `Bearer ${u.token}` } });
    await dl.arrayBuffer();
    const next = await formUpload(u, '/files/doc.md', 'four', { 'if-match': dl.headers.get('etag')! });
    expect(next.status, next.text).toBe(200);
    await expectNothingLeft(u);
  });

  it('If-Match that does not hold → 412 with the current sha256; nothing changes and nothing is left behind', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/doc.md', 'one');
    for (const onConflict of [undefined, 'overwrite', 'uuid']) {
      const res = await formUpload(u, '/files/doc.md', 'stale write', { 'if-match': etag(sha256('something else')) }, onConflict);
      expect412(res, v1.sha256, String(onConflict));
    }
    expect(await content(u, '/files/doc.md')).toBe('one');
    expect((await list(u, '/files')).map((e) => e.path).filter((p) => p.startsWith('/files/doc'))).toEqual(['/files/doc.md']);
    await expectNothingLeft(u);
  });

  it('If-Match where no file is (nothing, or a directory) → 412 with currentSha256 null', async () => {
    const u = await stack.user();
    expect412(await formUpload(u, '/files/absent.txt', 'x', { 'if-match': etag(sha256('x')) }), null, 'nothing there');
    await put(stack, u, '/files/dir/inside.txt', 'x');
    // A path naming a directory means "into it": the destination is /files/dir/f.bin, where no file is.
    expect412(await formUpload(u, '/files/dir', 'x', { 'if-match': etag(sha256('x')) }), null, 'into a directory');
    expect((await stat(u, '/files/absent.txt'))).toBeUndefined();
    await expectNothingLeft(u);
  });

  it('If-None-Match: * stores only where nothing is: a file there → 412 (not 409) whatever onConflict says', async () => {
    const u = await stack.user();
    const res = await formUpload(u, '/files/new.txt', 'first', { 'if-none-match': '*' });
    expect(res.status, res.text).toBe(200);
    for (const onConflict of [undefined, 'error', 'overwrite', 'uuid']) {
      expect412(await formUpload(u, '/files/new.txt', 'second', { 'if-none-match': '*' }, onConflict), sha256('first'), String(onConflict));
    }
    expect(await content(u, '/files/new.txt')).toBe('first');
    await expectNothingLeft(u);
  });

  it('malformed If-Match / If-None-Match → 400 INVALID_ARGUMENT naming the header; nothing begins', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/doc.md', 'one');
    for (const bad of ['*', v1.sha256, `W/${etag(v1.sha256)}`, `${etag(v1.sha256)}, ${etag(v1.sha256)}`, '"abc"', `"${v1.sha256}0"`, `"${'g'.repeat(64)}"`, '""']) {
      expect400(await formUpload(u, '/files/doc.md', 'two', { 'if-match': bad }), 'If-Match', bad);
    }
    for (const bad of [etag(v1.sha256), '"*"', 'W/*', 'yes']) {
      expect400(await formUpload(u, '/files/doc.md', 'two', { 'if-none-match': bad }), 'If-None-Match', bad);
    }
    expect(await content(u, '/files/doc.md')).toBe('one');
    await expectNothingLeft(u);
  });

  it('race — 10 concurrent uploads with the same If-Match: exactly one succeeds, nine get 412 with the winner\'s sha256', async () => {
    const u = await stack.user();
    const base = await put(stack, u, '/files/race.txt', 'base');
    const bodies = Array.from({ length: 10 }, (_, i) => `writer ${i} `.repeat(2_000));
    const results = await Promise.all(bodies.map((b) => formUpload(u, '/files/race.txt', b, { 'if-match': etag(base.sha256) })));
    const won = results.filter((r) => r.status === 200);
    expect(won.length, results.map((r) => r.status).join(',')).toBe(1);
    const winner = won[0]!.body.sha256 as string;
    for (const r of results.filter((x) => x.status !== 200)) expect412(r, winner);
    expect(sha256((await content(u, '/files/race.txt'))!)).toBe(winner);
    await expectNothingLeft(u);
  });

  it('another user\'s file is never a precondition\'s match: 412 null for them, the owner\'s file untouched', async () => {
    const owner = await stack.user();
    const other = await stack.user();
    const v1 = await put(stack, owner, '/files/secret.txt', 'mine');
    expect412(await formUpload(other, '/files/secret.txt', 'theirs', { 'if-match': etag(v1.sha256) }), null);
    expect((await formUpload(other, '/files/secret.txt', 'theirs', { 'if-none-match': '*' })).status, 'nothing is at their own path').toBe(200);
    expect(await content(owner, '/files/secret.txt')).toBe('mine');
    expect412(await other.request('DELETE', `/v1/agent/files?path=${q('/files/secret.txt')}`, undefined, { 'if-match': etag(v1.sha256) }), sha256('theirs'));
    expect412(await other.request('POST', '/v1/agent/files/move', { from: '/files/nope.txt', to: '/files/x.txt' }, { 'if-match': etag(v1.sha256) }), null);
    expect(await content(owner, '/files/secret.txt')).toBe('mine');
  });
});

describe('preconditions — uploads over tus', () => {
  it('tus — ifMatch that holds replaces (quoted or bare hex); ifNoneMatch: * stores a new file', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/t.txt', 'one');
    const quoted = await tusUpload(u, '/files/t.txt', 'two', { ifMatch: etag(v1.sha256) });
    expect(quoted.status, quoted.text).toBe(204);
    expect(await content(u, '/files/t.txt')).toBe('two');
    const bare = await tusUpload(u, '/files/t.txt', 'three', { ifMatch: sha256('two'), onConflict: 'uuid' });
    expect(bare.status, bare.text).toBe(204);
    expect(await content(u, '/files/t.txt')).toBe('three');
    for (const ifNoneMatch of ['*', null]) {
      const path = `/files/new-${ifNoneMatch === null ? 'key' : 'star'}.txt`;
      const created = await tusUpload(u, path, 'fresh', { ifNoneMatch });
      expect(created.status, created.text).toBe(204);
      expect(await content(u, path)).toBe('fresh');
    }
    await expectNothingLeft(u);
  });

  it('tus — a precondition that fails at creation → 412 then, nothing begins', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/t.txt', 'one');
    const stale = await tusCreate(u, '/files/t.txt', 3, { ifMatch: etag(sha256('other')) });
    expect412(stale.res, v1.sha256, 'stale ifMatch');
    expect412((await tusCreate(u, '/files/absent.txt', 3, { ifMatch: etag(v1.sha256) })).res, null, 'nothing there');
    expect412((await tusCreate(u, '/files/t.txt', 3, { ifNoneMatch: '*' })).res, v1.sha256, 'ifNoneMatch onto a file');
    expect412((await tusCreate(u, '/files/t.txt', 0, { ifNoneMatch: '*', onConflict: 'overwrite' })).res, v1.sha256, 'an empty file too');
    expect(await content(u, '/files/t.txt')).toBe('one');
    await expectNothingLeft(u);
  });

  it('tus — a precondition that held at creation but not when the last byte arrives → 412 at the PATCH, nothing stored', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/t.txt', 'one');
    const guarded = await tusCreate(u, '/files/t.txt', 5, { ifMatch: etag(v1.sha256) });
    const fresh = await tusCreate(u, '/files/late.txt', 5, { ifNoneMatch: '*' });
    expect(guarded.res.status).toBe(201);
    expect(fresh.res.status).toBe(201);
    const v2 = await put(stack, u, '/files/t.txt', 'two');
    const v3 = await put(stack, u, '/files/late.txt', 'other');
    expect412(await tusPatch(u, guarded.url!, 'later'), v2.sha256, 'ifMatch');
    expect412(await tusPatch(u, fresh.url!, 'later'), v3.sha256, 'ifNoneMatch');
    expect(await content(u, '/files/t.txt')).toBe('two');
    expect(await content(u, '/files/late.txt')).toBe('other');
    expect((await fetch(guarded.url!, { method: 'HEAD', headers: tusHeaders(u) })).status, 'the upload ended').toBe(404);
    await expectNothingLeft(u);
  });

  it('tus — malformed ifMatch / ifNoneMatch → 400 naming the metadata key', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/t.txt', 'one');
    for (const bad of ['*', 'W/"x"', `"${v1.sha256}`, 'abc']) {
      expect400((await tusCreate(u, '/files/t.txt', 3, { ifMatch: bad })).res, 'Upload-Metadata.ifMatch', bad);
    }
    expect400((await tusCreate(u, '/files/t.txt', 3, { ifNoneMatch: etag(v1.sha256) })).res, 'Upload-Metadata.ifNoneMatch');
    await expectNothingLeft(u);
  });

  it('tus race — 10 uploads created with the same ifMatch, their last bytes sent at once: exactly one 204, nine 412', async () => {
    const u = await stack.user();
    const base = await put(stack, u, '/files/race.txt', 'base');
    const bodies = Array.from({ length: 10 }, (_, i) => `tus writer ${i}`);
    const created = await Promise.all(bodies.map((b) => tusCreate(u, '/files/race.txt', Buffer.byteLength(b), { ifMatch: etag(base.sha256) })));
    for (const c of created) expect(c.res.status, c.res.text).toBe(201);
    const results = await Promise.all(created.map((c, i) => tusPatch(u, c.url!, bodies[i]!)));
    const won = results.filter((r) => r.status === 204);
    expect(won.length, results.map((r) => r.status).join(',')).toBe(1);
    const winner = bodies[results.indexOf(won[0]!)]!;
    for (const r of results.filter((x) => x.status !== 204)) expect412(r, sha256(winner));
    expect(await content(u, '/files/race.txt')).toBe(winner);
    await expectNothingLeft(u);
  });
});

describe('preconditions — delete, move, copy, restore', () => {
  const del = (u: ApiUser, path: string, headers: Record<string, string>, extra = '') => u.request('DELETE', `/v1/agent/files?path=${q(path)}${extra}`, undefined, headers);

  it('delete — If-Match that holds deletes; a stale one, a directory or nothing there → 412 and nothing changes', async () => {
    const u = await stack.user();
    const v1 = await put(stack, u, '/files/d/a.txt', 'a');
    expect412(await del(u, '/files/d/a.txt', { 'if-match': etag(sha256('b')) }), v1.sha256);
    expect412(await del(u, '/files/d', { 'if-match': etag(v1.sha256) }, '&recursive=true'), null, 'a directory');
    expect412(await del(u, '/files/none.txt', { 'if-match': etag(v1.sha256) }), null, 'nothing there');
    expect412(await del(u, '/files/d/a.txt', { 'if-match': etag(sha256('b')) }, '&permanent=true'), v1.sha256, 'permanent');
    expect(await content(u, '/files/d/a.txt')).toBe('a');
    const res = await del(u, '/files/d/a.txt', { 'if-match': etag(v1.sha256) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, path: '/files/d/a.txt' });
    expect(await stat(u, '/files/d/a.txt')).toBeUndefined();
    for (const bad of ['*', v1.sha256, '"short"']) expect400(await del(u, '/files/x', { 'if-match': bad }), 'If-Match', bad);
  });

  it('move and copy — If-Match guards `from`, ifMatchTo the file `to` replaces (whatever onConflict says)', async () => {
    const u = await stack.user();
    const a = await put(stack, u, '/files/a.txt', 'a');
    const b = await put(stack, u, '/files/b.txt', 'b');
    const mv = (body: object, headers: Record<string, string> = {}) => u.request('POST', '/v1/agent/files/move', body, headers);
    const cp = (body: object, headers: Record<string, string> = {}) => u.request('POST', '/v1/agent/files/copy', body, headers);
    expect412(await mv({ from: '/files/a.txt', to: '/files/c.txt' }, { 'if-match': etag(b.sha256) }), a.sha256, 'stale from');
    expect412(await cp({ from: '/files/a.txt', to: '/files/c.txt' }, { 'if-match': etag(b.sha256) }), a.sha256, 'stale from (copy)');
    expect412(await mv({ from: '/files/a.txt', to: '/files/b.txt', ifMatchTo: a.sha256 }), b.sha256, 'stale to');
    expect412(await mv({ from: '/files/a.txt', to: '/files/c.txt', ifMatchTo: a.sha256 }), null, 'nothing at to');
    expect(await content(u, '/files/a.txt')).toBe('a');
    expect(await content(u, '/files/b.txt')).toBe('b');
    expect(await stat(u, '/files/c.txt')).toBeUndefined();

    const copied = await cp({ from: '/files/a.txt', to: '/files/b.txt', ifMatchTo: b.sha256 }, { 'if-match': etag(a.sha256) });
    expect(copied.status, copied.text).toBe(200);
    expect(copied.body).toEqual({ success: true, from: '/files/a.txt', path: '/files/b.txt' });
    expect(await content(u, '/files/b.txt')).toBe('a');
    const moved = await mv({ from: '/files/a.txt', to: '/files/m.txt' }, { 'if-match': etag(a.sha256) });
    expect(moved.status, moved.text).toBe(200);
    const onto = await mv({ from: '/files/m.txt', to: '/files/b.txt', onConflict: 'error', ifMatchTo: a.sha256 });
    expect(onto.status, onto.text).toBe(200);
    expect(onto.body.path).toBe('/files/b.txt');
    expect(await stat(u, '/files/m.txt')).toBeUndefined();

    for (const bad of [etag(a.sha256), a.sha256.toUpperCase(), 'x']) expect400(await mv({ from: '/files/b.txt', to: '/files/q.txt', ifMatchTo: bad }), 'ifMatchTo', bad);
    expect400(await mv({ from: '/files/b.txt', to: '/files/q.txt' }, { 'if-match': a.sha256 }), 'If-Match');
  });

  it('race — 10 concurrent moves of one file with the same If-Match: exactly one lands, nine get 412 (null: it is gone)', async () => {
    const u = await stack.user();
    const f = await put(stack, u, '/files/src.txt', 'moving');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => u.request('POST', '/v1/agent/files/move', { from: '/files/src.txt', to: `/files/dst-${i}.txt` }, { 'if-match': etag(f.sha256) })));
    const won = results.filter((r) => r.status === 200);
    expect(won.length, results.map((r) => r.status).join(',')).toBe(1);
    for (const r of results.filter((x) => x.status !== 200)) expect412(r, null);
    const landed = (await list(u, '/files')).filter((e) => e.path.startsWith('/files/dst-') || e.path === '/files/src.txt');
    expect(landed.map((e) => e.path)).toEqual([won[0]!.body.path]);
    expect((await auditIndex(stack, u)).problems).toEqual([]);
  });

  it('race — 10 concurrent moves onto one file with the same ifMatchTo: exactly one replaces it', async () => {
    const u = await stack.user();
    const target = await put(stack, u, '/files/target.txt', 'target');
    await Promise.all(Array.from({ length: 10 }, (_, i) => put(stack, u, `/files/in/${i}.txt`, `source ${i}`)));
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => u.request('POST', '/v1/agent/files/move', { from: `/files/in/${i}.txt`, to: '/files/target.txt', ifMatchTo: target.sha256 })));
    expect(results.filter((r) => r.status === 200).length, results.map((r) => r.status).join(',')).toBe(1);
    const now = await stat(u, '/files/target.txt');
    for (const r of results.filter((x) => x.status !== 200)) expect412(r, now!.sha256!);
    expect((await list(u, '/files/in')).length).toBe(9);
  });

  it('restore — If-Match guards the file the revision is restored onto', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/r.txt', 'first');
    const v2 = await put(stack, u, '/files/r.txt', 'second');
    const revs = await u.request('GET', `/v1/agent/files/revisions?path=${q('/files/r.txt')}`);
    const first = revs.body.revisions.at(-1).revision as string;
    const restore = (headers: Record<string, string>) => u.request('POST', '/v1/agent/files/restore', { path: '/files/r.txt', revision: first }, headers);
    expect412(await restore({ 'if-match': etag(sha256('first')) }), v2.sha256);
    expect(await content(u, '/files/r.txt')).toBe('second');
    const res = await restore({ 'if-match': etag(v2.sha256) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ success: true, path: '/files/r.txt', sha256: sha256('first') });
    expect(await content(u, '/files/r.txt')).toBe('first');
    // Restoring a deleted file: no file is there, so any If-Match fails.
    await u.request('DELETE', `/v1/agent/files?path=${q('/files/r.txt')}`);
    expect412(await restore({ 'if-match': etag(sha256('first')) }), null);
    expect(await stat(u, '/files/r.txt')).toBeUndefined();
    expect((await restore({})).status).toBe(200);
    expect400(await restore({ 'if-match': 'nope' }), 'If-Match');
  });
});
