import { beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { copy, list, move, ok, put, read, stat, type Entry } from './support/files-api.js';
import { auditIndex } from './support/files-index-check.js';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';
import { unzip } from './support/zip.js';

/** Explicit folders (docs/api/files.md#folders): POST /v1/agent/files/directories. */

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});

const mkdir = (u: ApiUser, path: string) => u.request('POST', '/v1/agent/files/directories', { path });
const paths = (entries: Entry[]) => entries.map((e) => e.path);
/** A listing without every user's Home project folder (docs/api/projects.md). */
const mine = async (u: ApiUser, path: string, options: { recursive?: boolean } = {}) =>
  (await list(u, path, options)).filter((e) => e.path !== '/files/projects' && !e.path.startsWith('/files/projects/'));
const del = (u: ApiUser, path: string, recursive = false) => u.request('DELETE', `/v1/agent/files?path=${q(path)}&recursive=${recursive}`);
const exists = async (u: ApiUser, path: string) => (await u.request('GET', `/v1/agent/files?path=${q(path)}`)).status === 200;

async function cursorOf(u: ApiUser, path = '/files'): Promise<string> {
  const res = await u.request('GET', `/v1/agent/files/changes/cursor?path=${q(path)}`);
  expect(res.status, res.text).toBe(200);
  return res.body.cursor;
}
async function changesAfter(u: ApiUser, cursor: string): Promise<{ type: string; kind: string; path: string; from?: string }[]> {
  const res = await u.request('GET', `/v1/agent/files/changes?cursor=${q(cursor)}`);
  expect(res.status, res.text).toBe(200);
  return res.body.changes;
}
async function consistent(u: ApiUser): Promise<void> {
  expect((await auditIndex(stack, u)).problems).toEqual([]);
}

describe('folders — create', () => {
  it('create — 201 {path, created: true}, then 200 {path, created: false}; it is listed as a directory, empty, with missing parents', async () => {
    const u = await stack.user();
    const first = await mkdir(u, '/files/reports/2024/q1/');
    expect(first.status, first.text).toBe(201);
    expect(first.body).toEqual({ path: '/files/reports/2024/q1', created: true });
    const again = await mkdir(u, '/files/reports/2024/q1');
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ path: '/files/reports/2024/q1', created: false });
    expect((await mkdir(u, '/files/reports')).body).toEqual({ path: '/files/reports', created: false });
    expect((await mkdir(u, '/files')).body, 'the root always exists').toEqual({ path: '/files', created: false });

    expect(await mine(u, '/files')).toEqual([{ path: '/files/reports', name: 'reports', type: 'directory' }]);
    expect(await mine(u, '/files', { recursive: true })).toEqual([
      { path: '/files/reports', name: 'reports', type: 'directory' },
      { path: '/files/reports/2024', name: '2024', type: 'directory' },
      { path: '/files/reports/2024/q1', name: 'q1', type: 'directory' },
    ]);
    expect(await list(u, '/files/reports/2024/q1'), 'an empty folder lists nothing').toEqual([]);
    expect(await list(u, '/files/reports/2024/q1', { includeStats: false })).toEqual([]);
    // Paged listings of an explicit folder: no phantom entry, the right hasMore.
    await put(stack, u, '/files/reports/2024/a.txt', 'a');
    const page = await u.request('GET', `/v1/agent/files?path=${q('/files/reports/2024')}&limit=1`);
    expect(page.body).toMatchObject({ entries: [{ path: '/files/reports/2024/a.txt' }], hasMore: true });
    const next = await u.request('GET', `/v1/agent/files?path=${q('/files/reports/2024')}&limit=1&cursor=${q(page.body.cursor)}`);
    expect(next.body).toMatchObject({ entries: [{ path: '/files/reports/2024/q1', type: 'directory' }], hasMore: false, cursor: null });
    const read2024 = await read(u, '/files/reports/2024/q1');
    expect(read2024.body.error.code).toBe('IS_A_DIRECTORY');
    await consistent(u);
  });

  it('create — a file at the path or above it → 409 PATH_CONFLICT, nothing created', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/notes.md', '# notes');
    for (const path of ['/files/notes.md', '/files/notes.md/sub', '/files/notes.md/sub/deeper']) {
      const res = await mkdir(u, path);
      expect(res.status, path).toBe(409);
      expect(res.body.error.code).toBe('PATH_CONFLICT');
    }
    expect(paths(await mine(u, '/files', { recursive: true }))).toEqual(['/files/notes.md']);
    await consistent(u);
  });

  it('create — bad paths and bodies → 400 in the envelope', async () => {
    const u = await stack.user();
    for (const path of ['/filesx', 'files/a', '/files//a', '/files/../a', '/files/a\\b', '']) {
      const res = await mkdir(u, path);
      expect(res.status, path).toBe(400);
      expect(['INVALID_PATH', 'INVALID_ARGUMENT'], path).toContain(res.body.error.code);
    }
    const unknown = await u.request('POST', '/v1/agent/files/directories', { path: '/files/a', recursive: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const missing = await u.request('POST', '/v1/agent/files/directories', {});
    expect(missing.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'path' } });
    expect(await mine(u, '/files')).toEqual([]);
  });

  it('create — another user\'s folders are invisible; each user creates their own', async () => {
    const a = await stack.user();
    const b = await stack.user();
    expect((await mkdir(a, '/files/shared-name')).status).toBe(201);
    expect(await mine(b, '/files')).toEqual([]);
    expect((await b.request('GET', '/v1/agent/files?path=/files/shared-name')).status).toBe(404);
    expect((await del(b, '/files/shared-name')).status).toBe(404);
    expect((await mkdir(b, '/files/shared-name')).status, 'created for b, not "already there"').toBe(201);
    expect(await exists(a, '/files/shared-name')).toBe(true);
  });

  it('create — the changes feed reports one `created` of kind directory (a folder already there reports nothing)', async () => {
    const u = await stack.user();
    const cursor = await cursorOf(u);
    const scoped = await cursorOf(u, '/files/x/y');
    await mkdir(u, '/files/x/y/z');
    await mkdir(u, '/files/x/y/z');
    await mkdir(u, '/files/x');
    expect(await changesAfter(u, cursor)).toEqual([expect.objectContaining({ type: 'created', kind: 'directory', path: '/files/x/y/z' })]);
    const [change] = await changesAfter(u, cursor);
    expect(Object.keys(change!).sort()).toEqual(['at', 'kind', 'path', 'type']);
    expect(await changesAfter(u, scoped)).toEqual([expect.objectContaining({ type: 'created', kind: 'directory', path: '/files/x/y/z' })]);
  });
});

describe('folders — lifetime', () => {
  it('delete — an empty explicit folder goes with recursive=false; one that holds something → 409 DIRECTORY_NOT_EMPTY', async () => {
    const u = await stack.user();
    await mkdir(u, '/files/a/b');
    await put(stack, u, '/files/a/b/file.txt', 'x');
    const notEmpty = await del(u, '/files/a/b');
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.error.code).toBe('DIRECTORY_NOT_EMPTY');
    expect((await del(u, '/files/a/b/file.txt')).status).toBe(200);
    expect(await exists(u, '/files/a/b'), 'deleting its last file leaves an explicit folder').toBe(true);
    const cursor = await cursorOf(u);
    const res = await del(u, '/files/a/b');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, path: '/files/a/b' });
    expect(await exists(u, '/files/a/b')).toBe(false);
    expect(await exists(u, '/files/a'), 'its explicit parent stays').toBe(true);
    expect(await changesAfter(u, cursor)).toEqual([expect.objectContaining({ type: 'deleted', kind: 'directory', path: '/files/a/b' })]);
    expect((await del(u, '/files/a')).status).toBe(200);
    expect(await mine(u, '/files')).toEqual([]);
    await consistent(u);
  });

  it('implicit folders keep their rules: one emptied by its last file goes with it', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/implicit/deep/f.txt', 'x');
    await mkdir(u, '/files/kept');
    await put(stack, u, '/files/kept/implicit/f.txt', 'x');
    await del(u, '/files/implicit/deep/f.txt');
    await del(u, '/files/kept/implicit/f.txt');
    expect(paths(await mine(u, '/files', { recursive: true }))).toEqual(['/files/kept']);
    await consistent(u);
  });

  it('an upload whose path names an explicit folder lands in it; a recursive delete takes the folder and what is in it', async () => {
    const u = await stack.user();
    await mkdir(u, '/files/inbox');
    const res = await upload(stack.url, u, { filename: 'mail.txt', content: 'hello' }, { path: '/files/inbox' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.path).toBe('/files/inbox/mail.txt');
    await mkdir(u, '/files/inbox/empty/sub');
    expect((await del(u, '/files/inbox', true)).status).toBe(200);
    expect(await mine(u, '/files', { recursive: true })).toEqual([]);
    await consistent(u);
  });

  it('a file is never created where an explicit folder is (upload, move, copy → 409 PATH_CONFLICT)', async () => {
    const u = await stack.user();
    await mkdir(u, '/files/dir');
    await put(stack, u, '/files/f.txt', 'x');
    const moved = await move(u, '/files/f.txt', '/files/dir', 'overwrite');
    expect(moved.status).toBe(409);
    expect(moved.body.error.code).toBe('PATH_CONFLICT');
    expect((await copy(u, '/files/f.txt', '/files/dir', 'overwrite')).body.error.code).toBe('PATH_CONFLICT');
    await mkdir(u, '/files/other');
    expect((await move(u, '/files/other', '/files/dir')).body.error.code, 'a directory never merges').toBe('PATH_CONFLICT');
    await consistent(u);
  });
});

describe('folders — moves, copies, restores and exports carry them', () => {
  it('move — a tree holding an empty explicit subfolder moves it too; the moved folder stays explicit', async () => {
    const u = await stack.user();
    await mkdir(u, '/files/proj');
    await put(stack, u, '/files/proj/a.txt', 'a');
    await mkdir(u, '/files/proj/empty/inner');
    const cursor = await cursorOf(u);
    expect(await ok(move(u, '/files/proj', '/files/archive/proj'))).toBe('/files/archive/proj');
    expect(paths(await mine(u, '/files', { recursive: true }))).toEqual([
      '/files/archive',
      '/files/archive/proj',
      '/files/archive/proj/a.txt',
      '/files/archive/proj/empty',
      '/files/archive/proj/empty/inner',
    ]);
    expect(await changesAfter(u, cursor)).toEqual([expect.objectContaining({ type: 'moved', kind: 'directory', path: '/files/archive/proj', from: '/files/proj' })]);
    // Still explicit where it landed: emptied, it stays.
    await del(u, '/files/archive/proj/a.txt');
    await del(u, '/files/archive/proj/empty/inner');
    await del(u, '/files/archive/proj/empty');
    expect(paths(await mine(u, '/files', { recursive: true }))).toEqual(['/files/archive', '/files/archive/proj']);
    // An empty explicit folder moves on its own.
    expect(await ok(move(u, '/files/archive/proj', '/files/proj2'))).toBe('/files/proj2');
    expect(paths(await mine(u, '/files', { recursive: true }))).toEqual(['/files/proj2']);
    await consistent(u);
  });

  it('copy — empty explicit folders are copied, and the copies stay when emptied', async () => {
    const u = await stack.user();
    await mkdir(u, '/files/src/empty');
    await put(stack, u, '/files/src/f.txt', 'f');
    expect(await ok(copy(u, '/files/src', '/files/dst'))).toBe('/files/dst');
    expect(paths(await list(u, '/files/dst', { recursive: true }))).toEqual(['/files/dst/empty', '/files/dst/f.txt']);
    await del(u, '/files/dst/f.txt');
    expect(paths(await mine(u, '/files', { recursive: true }))).toContain('/files/dst');
    expect(await ok(copy(u, '/files/dst/empty', '/files/lone'))).toBe('/files/lone');
    expect(await exists(u, '/files/lone')).toBe(true);
    expect((await stat(u, '/files/src/f.txt'))?.type).toBe('file');
    await consistent(u);
  });

  it('restore — a recursive delete of a folder with an empty explicit subfolder, undone, brings its files back', async () => {
    const u = await stack.user();
    await mkdir(u, '/files/t/empty');
    await put(stack, u, '/files/t/f.txt', 'f');
    expect((await del(u, '/files/t', true)).status).toBe(200);
    const res = await u.request('POST', '/v1/agent/files/restore', { path: '/files/t', recursive: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ restored: 1 });
    expect(paths(await mine(u, '/files', { recursive: true }))).toContain('/files/t/f.txt');
    await consistent(u);
  });

  it('export — a project\'s empty folder is an entry `<name>/<path>/` in the ZIP; folders that hold files are implied by them', async () => {
    const u = await stack.user();
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Plans', goal: 'g' })).status).toBe(201);
    await mkdir(u, '/files/projects/Plans/drafts/empty');
    await mkdir(u, '/files/projects/Plans/full');
    await put(stack, u, '/files/projects/Plans/full/a.md', 'alpha');
    const res = await fetch(`${stack.url}/v1/agent/projects/export?name=Plans`, { headers: { authorization: `Bearer ${u.token}` } });
    expect(res.status).toBe(200);
    const entries = await unzip(Buffer.from(await res.arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual(['Plans/CONTEXT.md', 'Plans/drafts/empty/', 'Plans/full/a.md']);
    expect(entries.find((e) => e.name === 'Plans/drafts/empty/')?.content.byteLength).toBe(0);
    expect(entries.find((e) => e.name === 'Plans/full/a.md')?.content.toString()).toBe('alpha');
  });
});
