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
