import { beforeAll, describe, expect, it } from 'vitest';
import { q } from './support/files.js';
import { put, sha256 } from './support/files-api.js';
import { sharedStack, type ApiResponse, type SharedStack } from './support/stack.js';

/**
 * A broken or malicious client against the newer file routes: checkpoints, rewind, fork (copy
 * with `at`), search, folders, the changes feed, and file preconditions. Each answer must be a
 * 2xx or a 4xx in the envelope (docs/api/conventions.md#errors), within a few seconds.
 */

let stack: SharedStack;
beforeAll(() => {
  stack = sharedStack();
});

const HEX = 'ab'.repeat(32);

function expectError(res: ApiResponse, status: number, code: string, field?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error.code, res.text).toBe(code);
  if (field !== undefined) expect(res.body.error.details?.field, res.text).toBe(field);
}

describe('fork — preconditions', () => {
  it('copy with `at` honours If-Match on `from` and ifMatchTo on the file it replaces: 412 and nothing changes', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/src/a.txt', 'then');
    const ck = await u.request('POST', '/v1/agent/files/checkpoints', { path: '/files/src' });
    expect(ck.status, ck.text).toBe(201);
    await put(stack, u, '/files/src/a.txt', 'now');
    await put(stack, u, '/files/dst.txt', 'keep me');
    const at = ck.body.checkpointId as string;

    const staleFrom = await u.request('POST', '/v1/agent/files/copy', { from: '/files/src/a.txt', to: '/files/fork.txt', at }, { 'if-match': `"${HEX}"` });
    expectError(staleFrom, 412, 'PRECONDITION_FAILED');
    expect(staleFrom.body.error.details.currentSha256).toBe(sha256('now'));
    expect((await u.request('GET', `/v1/agent/files?path=${q('/files/fork.txt')}`)).status, 'nothing copied').toBe(404);

    const staleTo = await u.request('POST', '/v1/agent/files/copy', { from: '/files/src/a.txt', to: '/files/dst.txt', at, onConflict: 'overwrite', ifMatchTo: HEX });
    expectError(staleTo, 412, 'PRECONDITION_FAILED');
    expect(staleTo.body.error.details.currentSha256).toBe(sha256('keep me'));
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/dst.txt')}`)).body.content).toBe('keep me');

    // Conditions that hold: the fork replaces the file whatever onConflict says.
    const held = await u.request('POST', '/v1/agent/files/copy', { from: '/files/src/a.txt', to: '/files/dst.txt', at, ifMatchTo: sha256('keep me') }, { 'if-match': `"${sha256('now')}"` });
    expect(held.status, held.text).toBe(200);
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/dst.txt')}`)).body.content).toBe('then');
  });
});

describe('search — hostile globs', () => {
  it('a glob of many stars against long names answers at once, and the service keeps serving others', async () => {
    const u = await stack.user();
    const other = await stack.user();
    await put(stack, u, `/files/${'a'.repeat(200)}`, 'needle');
    const started = Date.now();
    const slow = u.request('GET', `/v1/agent/files/search?q=needle&glob=${q(`${'*a'.repeat(30)}b`)}`);
    const meanwhile = await other.request('GET', '/v1/agent/files?path=/files');
    expect(meanwhile.status).toBe(200);
    expect(Date.now() - started, 'another user is served meanwhile').toBeLessThan(5_000);
    const res = await slow;
    expect(res.status, res.text).toBe(200);
    expect(res.body.matches).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('rewind and fork — hostile `to` and `at`', () => {
  it('a time that is no date of the calendar (30 February, 25 o\'clock, minute 60) → 400 on `to` and `at`, nothing changes', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/r/a.txt', 'a');
    for (const to of ['2026-11-31T00:00:00Z', '2026-02-30T00:00:00Z', '2026-04-31T12:00:00Z', '2026-01-01T25:00:00Z', '2026-01-01T12:60:00Z', '2026-01-01T12:00:61Z', '2026-13-01T00:00:00Z', '2026-01-01T12:00:00+24:00']) {
      expectError(await u.request('POST', '/v1/agent/files/rewind', { path: '/files/r', to }), 400, 'INVALID_ARGUMENT', 'to');
      expectError(await u.request('POST', '/v1/agent/files/copy', { from: '/files/r', to: '/files/r2', at: to }), 400, 'INVALID_ARGUMENT', 'at');
    }
    expect((await u.request('GET', '/v1/agent/files/checkpoints')).body.checkpoints, 'no rewind took its checkpoint').toEqual([]);
  });
});

describe('checkpoints — hostile', () => {
  it('what a checkpoint held after a permanent delete leaves the usage once the checkpoint goes: nothing stays counted', async () => {
    const u = await stack.user();
    await u.request('DELETE', `/v1/agent/files?path=${q('/files/projects')}&recursive=true&permanent=true`);
    const body = `unique ${u.sub} ${'x'.repeat(1000)}`;
    const file = await put(stack, u, '/files/held/a.txt', body);
    const ck = await u.request('POST', '/v1/agent/files/checkpoints', { path: '/files/held' });
    expect(ck.status, ck.text).toBe(201);
    const revision = (await u.request('GET', `/v1/agent/files/revisions?path=${q('/files/held/a.txt')}`)).body.revisions[0].revision as string;
    expect((await u.request('DELETE', `/v1/agent/files?path=${q('/files/held')}&recursive=true&permanent=true`)).status).toBe(200);
    const held = (await u.request('GET', '/v1/usage')).body.files;
    expect(held.bytes, 'the checkpoint keeps the bytes counted').toBe(file.size);
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/held/a.txt')}&revision=${revision}`)).body.content).toBe(body);
    expect((await u.request('DELETE', `/v1/agent/files/checkpoints/${ck.body.checkpointId}`)).status).toBe(204);
    const usage = (await u.request('GET', '/v1/usage')).body;
    expect(usage.files.bytes).toBe(0);
    expect(usage.checkpoints).toMatchObject({ count: 0, bytes: 0 });
    expectError(await u.request('GET', `/v1/agent/files/read?path=${q('/files/held/a.txt')}&revision=${revision}`), 404, 'REVISION_NOT_FOUND');
    expectError(await u.request('POST', '/v1/agent/files/rewind', { path: '/files/held', to: ck.body.checkpointId }), 404, 'CHECKPOINT_NOT_FOUND');
    expectError(await u.request('POST', '/v1/agent/files/copy', { from: '/files/held', to: '/files/back', at: ck.body.checkpointId }), 404, 'CHECKPOINT_NOT_FOUND');
  });

  it('bodies of the wrong shape and ids of any form answer in the envelope', async () => {
    const u = await stack.user();
    for (const [body, field] of [[{ path: null }, 'path'], [{ label: null }, 'label'], [{ label: ['a'] }, 'label'], [{ path: 5 }, 'path'], [{ label: '\ud800' }, 'label']] as const) {
      expectError(await u.request('POST', '/v1/agent/files/checkpoints', body), 400, 'INVALID_ARGUMENT', field);
    }
    for (const body of ['[]', 'null', '"x"', '5']) expectError(await u.request('POST', '/v1/agent/files/checkpoints', body), 400, 'INVALID_ARGUMENT');
    for (const [body, field] of [[{ path: '/files', to: 5 }, 'to'], [{ path: '/files', to: null }, 'to'], [{ path: '/files', to: ['ckp_'] }, 'to'], [{ path: null, to: 'ckp_' }, 'path'], [{ path: '/files', to: 'x'.repeat(101) }, 'to']] as const) {
      expectError(await u.request('POST', '/v1/agent/files/rewind', body), 400, 'INVALID_ARGUMENT', field);
    }
    for (const id of [`ckp_${'A'.repeat(32)}`, `ckp_${'a'.repeat(33)}`, 'ckp_', 'x'.repeat(4000), '%00', 'ckp_%F0%9F%98%80', '..%2F..%2Fckm']) {
      for (const method of ['GET', 'DELETE']) expectError(await u.request(method, `/v1/agent/files/checkpoints/${id}`), 404, 'CHECKPOINT_NOT_FOUND');
    }
  });
});

describe('folders and changes — hostile', () => {
  it('folders: /files is there already, a segment of 256 bytes or a path below a file is refused, `//` is invalid', async () => {
    const u = await stack.user();
    const root = await u.request('POST', '/v1/agent/files/directories', { path: '/files/' });
    expect(root.status, root.text).toBe(200);
    expect(root.body).toEqual({ path: '/files', created: false });
    expectError(await u.request('POST', '/v1/agent/files/directories', { path: `/files/${'é'.repeat(128)}` }), 400, 'INVALID_PATH');
    expect((await u.request('POST', '/v1/agent/files/directories', { path: `/files/${'é'.repeat(127)}a` })).status).toBe(201);
    await put(stack, u, '/files/f.txt', 'f');
    expectError(await u.request('POST', '/v1/agent/files/directories', { path: '/files/f.txt/sub/deeper' }), 409, 'PATH_CONFLICT');
    expectError(await u.request('POST', '/v1/agent/files/directories', { path: '/files/f.txt' }), 409, 'PATH_CONFLICT');
    expectError(await u.request('POST', '/v1/agent/files/directories', { path: '/files//x' }), 400, 'INVALID_PATH');
    expectError(await u.request('POST', '/v1/agent/files/directories', { path: ['/files/x'] }), 400, 'INVALID_ARGUMENT', 'path');
  });

  it('changes: a cursor of a search or a listing, or a made-up one, is 400 on cursor; timeouts outside 0–60 are 400 on timeout', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/c/a.txt', 'needle\nneedle');
    const searched = await u.request('GET', `/v1/agent/files/search?q=needle&limit=1`);
    expect(searched.body.cursor).toEqual(expect.any(String));
    const listed = await u.request('GET', `/v1/agent/files?path=${q('/files')}&recursive=true&limit=1`);
    const forged = `${Buffer.from(JSON.stringify(['changes:/files', '0-0'])).toString('base64url')}.${'A'.repeat(24)}`;
    for (const cursor of [searched.body.cursor, listed.body.cursor, forged, '.', 'a.b.c', Buffer.from('null').toString('base64url'), Buffer.from('"changes:"').toString('base64url')]) {
      expectError(await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`), 400, 'INVALID_ARGUMENT', 'cursor');
    }
    const { cursor } = (await u.request('GET', '/v1/agent/files/changes/cursor')).body;
    for (const timeout of ['61', '-1', 'abc', '1e3', '0.5', '99999999999999999999']) {
      expectError(await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}&timeout=${timeout}`), 400, 'INVALID_ARGUMENT', 'timeout');
    }
    const other = await stack.user();
    expectError(await other.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`), 400, 'INVALID_ARGUMENT', 'cursor');
  });
});

describe('rewind — what stands in the way', () => {
  it('folders created since where a file of then was go, and the file comes back (counted); a folder of then is left alone', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/w/x.txt', 'then');
    expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/w/kept' })).status).toBe(201);
    const ck = await u.request('POST', '/v1/agent/files/checkpoints', { path: '/files/w' });
    expect((await u.request('DELETE', `/v1/agent/files?path=${q('/files/w/x.txt')}`)).status).toBe(200);
    expect((await u.request('POST', '/v1/agent/files/directories', { path: '/files/w/x.txt/inner/deeper' })).status).toBe(201);
    const res = await u.request('POST', '/v1/agent/files/rewind', { path: '/files/w', to: ck.body.checkpointId });
    expect(res.status, res.text).toBe(200);
    expect(res.body, 'the file of then is back, not skipped').toMatchObject({ restored: 1, removed: 0, unchanged: 0 });
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/w/x.txt')}`)).body.content).toBe('then');
    const listed = await u.request('GET', `/v1/agent/files?path=${q('/files/w')}&recursive=true&includeStats=false`);
    expect(listed.body.entries).toEqual([
      { path: '/files/w/kept', name: 'kept', type: 'directory' },
      { path: '/files/w/x.txt', name: 'x.txt', type: 'file' },
    ]);
  });
});
