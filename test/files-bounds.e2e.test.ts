import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { copy, ok, pool, put } from './support/files-api.js';
import { mcpConnect } from './support/mcp.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * Bounded tree work and the entry quota over HTTP (docs/api/files.md#bounded-tree-work,
 * docs/api/usage.md#entry-quota): the shape of the 400 and of the 403 on every route they concern,
 * and that a refused request changes nothing a client can see. The rules themselves are held by
 * services/files/test/bounds.int.test.ts on the index.
 */
const BOUND = 20;
const LIMIT = 100;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ filesEnv: { MAX_TREE_ENTRIES: String(BOUND), MAX_FILES: String(LIMIT) } });
});
afterAll(async () => {
  await stack?.stop();
});

const get = async (u: ApiUser, path: string) => {
  const res = await u.request('GET', path);
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.body;
};

/** What a client sees of the user's files: the listing, the trash, the checkpoints, the usage. */
async function seen(u: ApiUser) {
  return {
    tree: (await get(u, '/v1/agent/files?path=/files&recursive=true')).entries,
    trash: (await get(u, '/v1/agent/files/trash?path=/files&recursive=true')).entries,
    checkpoints: (await get(u, '/v1/agent/files/checkpoints')).checkpoints,
    usage: await get(u, '/v1/usage'),
  };
}

/** Sends the request, which must be refused; the listing, trash, checkpoints, usage and changes feed stay as they were. */
async function refused(u: ApiUser, send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const { cursor } = await get(u, '/v1/agent/files/changes/cursor?path=/files');
  const before = await seen(u);
  const res = await send();
  expect(await seen(u)).toEqual(before);
  expect((await get(u, `/v1/agent/files/changes?cursor=${q(cursor)}`)).changes).toEqual([]);
  return res;
}

/** `n` files in `dir`, 8 uploads at a time. */
const files = (u: ApiUser, dir: string, n: number) => pool(Array.from({ length: n }, (_, i) => i), 8, (i) => put(stack, u, `${dir}/f${String(i).padStart(3, '0')}.txt`, `${dir} ${i}`));

const expectTooLarge = (res: ApiResponse, field: string) => {
  expect(res.status, res.text).toBe(400);
  expect(res.body).toEqual({ error: { code: 'INVALID_ARGUMENT', message: expect.stringContaining('MAX_TREE_ENTRIES'), requestId: expect.any(String), details: { field, limit: BOUND } } });
};
const expectFull = (res: ApiResponse) => {
  expect(res.status, res.text).toBe(403);
  expect(res.body).toEqual({ error: { code: 'QUOTA_EXCEEDED', message: expect.any(String), requestId: expect.any(String), details: { quota: 'MAX_FILES', limit: LIMIT, used: LIMIT } } });
};

describe(`files — bounded tree work (MAX_TREE_ENTRIES = ${BOUND})`, () => {
  it('every tree operation on a tree one entry past the bound → 400 INVALID_ARGUMENT (details.field, details.limit a JSON number), and nothing changes', async () => {
    const u = await stack.user();
    // /files/t: the folder d and 20 files, 21 entries; /files/r: 21 paths in the trash, deleted in two halves.
    await files(u, '/files/t/d', BOUND);
    await files(u, '/files/r/a', 10);
    await files(u, '/files/r/b', BOUND + 1 - 10);
    for (const half of ['a', 'b']) expect((await u.request('DELETE', `/v1/agent/files?path=/files/r/${half}&recursive=true`)).status).toBe(200);
    const at = new Date().toISOString();
    const cases: [string, () => Promise<ApiResponse>, string][] = [
      ['move', () => u.request('POST', '/v1/agent/files/move', { from: '/files/t', to: '/files/u' }), 'from'],
      ['copy', () => u.request('POST', '/v1/agent/files/copy', { from: '/files/t', to: '/files/u' }), 'from'],
      ['recursive delete', () => u.request('DELETE', '/v1/agent/files?path=/files/t&recursive=true'), 'path'],
      ['purge', () => u.request('DELETE', '/v1/agent/files?path=/files/t&recursive=true&permanent=true'), 'path'],
      ['restore of a folder', () => u.request('POST', '/v1/agent/files/restore', { path: '/files/r', recursive: true }), 'path'],
      ['checkpoint', () => u.request('POST', '/v1/agent/files/checkpoints', { path: '/files/t' }), 'path'],
      ['rewind', () => u.request('POST', '/v1/agent/files/rewind', { path: '/files/t', to: at }), 'path'],
      ['fork', () => u.request('POST', '/v1/agent/files/copy', { from: '/files/t', to: '/files/u', at }), 'from'],
    ];
    for (const [name, send, field] of cases) {
      const res = await refused(u, send);
      expect(res.status, `${name}: ${res.text}`).toBe(400);
      expectTooLarge(res, field);
    }
    // Over MCP the tools' own argument is named.
    const mcp = await mcpConnect(stack.url, u);
    try {
      for (const tool of ['move_file', 'copy_file']) {
        let answer: Awaited<ReturnType<typeof mcp.call>> | undefined;
        await refused(u, async () => {
          answer = await mcp.call(tool, { source: '/files/t', destination: '/files/u' });
          return { status: 0, headers: new Headers(), body: undefined, text: '' };
        });
        expect(answer?.isError, tool).toBe(true);
        expect(answer?.structuredContent.error).toEqual({ code: 'INVALID_ARGUMENT', message: expect.any(String), details: { field: 'source', limit: BOUND } });
      }
    } finally {
      await mcp.close();
    }
  });

  it('at exactly the bound every tree operation works', async () => {
    const u = await stack.user();
    // The folder d and 19 files: 20 entries.
    await files(u, '/files/e/d', BOUND - 1);
    expect(await ok(u.request('POST', '/v1/agent/files/move', { from: '/files/e', to: '/files/m' }))).toBe('/files/m');
    expect(await ok(copy(u, '/files/m', '/files/c'))).toBe('/files/c');
    const taken = await u.request('POST', '/v1/agent/files/checkpoints', { path: '/files/c' });
    expect(taken.status, taken.text).toBe(201);
    expect(await ok(u.request('POST', '/v1/agent/files/copy', { from: '/files/c', to: '/files/f', at: taken.body.checkpointId }))).toBe('/files/f');
    expect((await get(u, '/v1/agent/files?path=/files/f&recursive=true')).entries).toHaveLength(BOUND);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/c&recursive=true')).status).toBe(200);
    const back = await u.request('POST', '/v1/agent/files/rewind', { path: '/files/c', to: taken.body.checkpointId });
    expect(back.status, back.text).toBe(200);
    expect(back.body).toMatchObject({ restored: BOUND - 1, removed: 0 });
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/f&recursive=true')).status).toBe(200);
    expect((await u.request('POST', '/v1/agent/files/restore', { path: '/files/f', recursive: true })).body).toMatchObject({ success: true, restored: BOUND - 1 });
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/f&recursive=true&permanent=true')).status).toBe(200);
    for (const tree of ['/files/m', '/files/c']) expect((await get(u, `/v1/agent/files?path=${tree}&recursive=true`)).entries).toHaveLength(BOUND);
    expect((await get(u, '/v1/agent/files/trash?path=/files&recursive=true')).entries).toEqual([]);
  });
});

describe(`files — the entry quota (MAX_FILES = ${LIMIT})`, () => {
  /** Fills the user's entries up to `to` (they must have fewer than `to` - 10): a folder of 9 files, copies of it, then single files in /files/x. */
  async function fill(u: ApiUser, to: number) {
    await files(u, '/files/fill/a', 9);
    let used: number = (await get(u, '/v1/usage')).files.entries;
    for (let i = 0; used + 10 <= to - 2; i++, used += 10) await ok(copy(u, '/files/fill/a', `/files/fill/c${i}`));
    await files(u, '/files/x', to - used - 1);
    expect((await get(u, '/v1/usage')).files).toMatchObject({ entries: to, entriesLimit: LIMIT });
  }

  it('/v1/usage shows the entries (files, folders, the trash) against entriesLimit; a copy shares its bytes but counts', async () => {
    const u = await stack.user();
    // Home (docs/api/projects.md#home) is there from the first request: its folders and context file count too.
    const home = (await get(u, '/v1/usage')).files;
    expect(home.entries).toBe((await get(u, '/v1/agent/files?path=/files&recursive=true')).entries.length);
    await put(stack, u, '/files/a/x.txt', 'x');
    expect((await get(u, '/v1/usage')).files).toMatchObject({ count: home.count + 1, entries: home.entries + 2, entriesLimit: LIMIT });
    const { bytes } = (await get(u, '/v1/usage')).files;
    await ok(copy(u, '/files/a', '/files/b'));
    expect((await get(u, '/v1/usage')).files).toEqual({ count: home.count + 2, bytes, quotaBytes: expect.any(Number), entries: home.entries + 4, entriesLimit: LIMIT });
    // Deleted, b/x.txt is in the trash: it still counts, its folder no longer does.
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/b&recursive=true')).status).toBe(200);
    expect((await get(u, '/v1/usage')).files).toMatchObject({ count: home.count + 1, entries: home.entries + 3 });
  });

  it('every way in at the quota → 403 QUOTA_EXCEEDED (details.quota MAX_FILES, limit and used JSON integers) and nothing changes: upload, tus, folder, copy, fork, restore, restore of a folder, rewind, MCP write_file', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/w/keep.txt', 'keep');
    await put(stack, u, '/files/w/sub/s.txt', 's');
    const taken = await u.request('POST', '/v1/agent/files/checkpoints', { path: '/files/w' });
    expect(taken.status).toBe(201);
    // s.txt to the trash (its folder goes with it): coming back, it needs the folder again.
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/w/sub/s.txt')).status).toBe(200);
    const [revision] = (await get(u, `/v1/agent/files/revisions?path=${q('/files/w/sub/s.txt')}`)).revisions.filter((r: { deleted: boolean }) => !r.deleted);
    await fill(u, LIMIT);
    const ways: [string, () => Promise<ApiResponse>][] = [
      ['multipart upload', () => upload(stack.url, u, { filename: 'n.txt', content: 'new' }, { path: '/files/w/new.txt' })],
      [
        'tus',
        async () => {
          const res = await fetch(`${stack.url}/v1/agent/files/uploads`, {
            method: 'POST',
            headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': '3', 'upload-metadata': `path ${Buffer.from('/files/w/tus.txt').toString('base64')}` },
          });
          return { status: res.status, headers: res.headers, body: await res.json(), text: '' };
        },
      ],
      ['create folder', () => u.request('POST', '/v1/agent/files/directories', { path: '/files/w/empty' })],
      ['copy', () => u.request('POST', '/v1/agent/files/copy', { from: '/files/w/keep.txt', to: '/files/w/keep2.txt' })],
      ['fork', () => u.request('POST', '/v1/agent/files/copy', { from: '/files/w', to: '/files/w2', at: taken.body.checkpointId })],
      ['restore', () => u.request('POST', '/v1/agent/files/restore', { path: '/files/w/sub/s.txt', revision: revision.revision })],
      ['restore of a folder', () => u.request('POST', '/v1/agent/files/restore', { path: '/files/w/sub', recursive: true })],
      ['rewind', () => u.request('POST', '/v1/agent/files/rewind', { path: '/files/w', to: taken.body.checkpointId })],
    ];
    for (const [name, send] of ways) {
      const res = await refused(u, send);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(403);
      expectFull(res);
    }
    const mcp = await mcpConnect(stack.url, u);
    try {
      let answer: Awaited<ReturnType<typeof mcp.call>> | undefined;
      await refused(u, async () => {
        answer = await mcp.call('write_file', { path: '/files/w/mcp.txt', content: 'new\n' });
        return { status: 0, headers: new Headers(), body: undefined, text: '' };
      });
      expect(answer?.isError).toBe(true);
      expect(answer?.structuredContent.error).toEqual({ code: 'QUOTA_EXCEEDED', message: expect.any(String), details: { quota: 'MAX_FILES', limit: LIMIT, used: LIMIT } });
    } finally {
      await mcp.close();
    }
    // What adds no entry still works: an overwrite.
    await put(stack, u, '/files/w/keep.txt', 'kept');
    expect((await get(u, '/v1/usage')).files.entries).toBe(LIMIT);
  });

  it('under concurrency — 20 folders created at once with 5 places left: exactly 5 are 201, the rest 403, and the entries end at MAX_FILES', async () => {
    const u = await stack.user();
    await fill(u, LIMIT - 5);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => u.request('POST', '/v1/agent/files/directories', { path: `/files/n${i}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    for (const r of results.filter((r) => r.status !== 201)) expectFull(r);
    expect((await get(u, '/v1/usage')).files.entries).toBe(LIMIT);
    expect((await get(u, '/v1/agent/files?path=/files&recursive=true')).entries).toHaveLength(LIMIT);
  });
});
