import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUserId } from '@workspace/testkit';
import { collect, realFiles, text } from './support.js';

let files: Awaited<ReturnType<typeof realFiles>>;
beforeAll(async () => {
  files = await realFiles({ maxReadBytes: 1024 });
});
afterAll(async () => {
  await files?.close();
});

const put = (user: string, path: string, body: string | Buffer) =>
  files.uploads.upload(user, { path, filename: 'x', onConflict: 'overwrite' }, (async function* () {
    yield Buffer.from(body);
  })());

describe('workspace on S3', () => {
  it('workspace — list, recursive list and a file listing itself', async () => {
    const u = newUserId();
    for (const p of ['/files/b.txt', '/files/a/x.md', '/files/a/y/z.txt', '/files/a b.txt']) await put(u, p, 'hi');
    const top = await files.workspace.list(u, '/files', false);
    expect(top.entries.map((e) => [e.path, e.type])).toEqual([['/files/a', 'directory'], ['/files/a b.txt', 'file'], ['/files/b.txt', 'file']]);
    const all = await files.workspace.list(u, '/files/', true);
    expect(all.path).toBe('/files');
    expect(all.entries.map((e) => e.path)).toEqual(['/files/a', '/files/a b.txt', '/files/a/x.md', '/files/a/y', '/files/a/y/z.txt', '/files/b.txt']);
    const one = await files.workspace.list(u, '/files/a/x.md', false);
    expect(one.entries).toEqual([expect.objectContaining({ path: '/files/a/x.md', name: 'x.md', type: 'file', size: 2, mimeType: 'text/markdown' })]);
    await expect(files.workspace.list(u, '/files/nope', false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect((await files.workspace.list(newUserId(), '/files', true)).entries).toEqual([]);
  });

  it('workspace — read: text, limit inclusive, not text, directory', async () => {
    const u = newUserId();
    await put(u, '/files/t.txt', 'héllo');
    await put(u, '/files/limit.txt', 'x'.repeat(1024));
    await put(u, '/files/over.txt', 'x'.repeat(1025));
    await put(u, '/files/bin', Buffer.from([0xff, 0xfe, 0x00]));
    expect((await files.workspace.read(u, '/files/t.txt')).content.toString('utf8')).toBe('héllo');
    expect((await files.workspace.read(u, '/files/limit.txt')).content.byteLength).toBe(1024);
    await expect(files.workspace.read(u, '/files/over.txt')).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    await expect(files.workspace.read(u, '/files/bin')).rejects.toMatchObject({ code: 'FILE_NOT_TEXT' });
    await expect(files.workspace.read(u, '/files')).rejects.toMatchObject({ code: 'IS_A_DIRECTORY' });
    await put(u, '/files/d/e.txt', 'e');
    await expect(files.workspace.read(u, '/files/d')).rejects.toMatchObject({ code: 'IS_A_DIRECTORY' });
    await expect(files.workspace.read(u, '/files/missing')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('workspace — delete: a file, a directory only recursively, never the root', async () => {
    const u = newUserId();
    await put(u, '/files/d/one.txt', '1');
    await put(u, '/files/d/sub/two.txt', '2');
    await put(u, '/files/keep.txt', 'k');
    await expect(files.workspace.delete(u, '/files/d', false)).rejects.toMatchObject({ code: 'DIRECTORY_NOT_EMPTY' });
    expect(await files.workspace.delete(u, '/files/d/one.txt', false)).toEqual({ path: '/files/d/one.txt' });
    expect(await files.workspace.delete(u, '/files/d/', true)).toEqual({ path: '/files/d' });
    expect((await files.workspace.list(u, '/files', true)).entries.map((e) => e.path)).toEqual(['/files/keep.txt']);
    await expect(files.workspace.delete(u, '/files', true)).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(files.workspace.delete(u, '/files/d', true)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('workspace — one user never reaches another user\'s files, whatever the path says', async () => {
    const a = newUserId();
    const b = newUserId();
    await put(a, '/files/secret.txt', 'a only');
    await expect(files.workspace.read(b, '/files/secret.txt')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    await expect(files.workspace.delete(b, '/files/secret.txt', false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect((await files.workspace.list(b, '/files', true)).entries).toEqual([]);
    await expect(files.workspace.read(b, '/files/../secret.txt')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    expect((await collect(await files.workspace.download(a, '/files/secret.txt', {}))).toString()).toBe('a only');
    void text;
  });
});
