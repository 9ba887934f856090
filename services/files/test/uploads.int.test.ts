import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUserId } from '@workspace/testkit';
import { bytes, collect, MiB, realFiles, text } from './support.js';

let files: Awaited<ReturnType<typeof realFiles>>;
beforeAll(async () => {
  files = await realFiles({ maxUploadBytes: 8 * MiB });
});
afterAll(async () => {
  await files?.close();
});

const upload = (user: string, path: string | undefined, filename: string, body: AsyncIterable<Uint8Array>, onConflict: 'error' | 'overwrite' | 'uuid' = 'error') =>
  files.uploads.upload(user, { path, filename, onConflict }, body);

const content = async (user: string, path: string) => (await collect(await files.workspace.download(user, path, {}))).toString('utf8');

/** Every key in the bucket, temporary ones included. */
async function allKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of files.store.list('', { recursive: true })) keys.push(...page.objects.map((o) => o.key));
  return keys;
}

describe('uploads on S3 + Redis', () => {
  it('uploads — destination rules: no path, a directory, a trailing slash, a full path', async () => {
    const u = newUserId();
    expect(await upload(u, undefined, 'a.md', text('1'))).toEqual({ path: '/files/a.md', size: 1, mimeType: 'text/markdown' });
    expect((await upload(u, '/files/docs/', 'b.txt', text('2'))).path).toBe('/files/docs/b.txt');
    expect((await upload(u, '/files/docs', 'c.txt', text('3'))).path).toBe('/files/docs/c.txt');
    expect((await upload(u, '/files/docs/renamed.bin', 'ignored.txt', text('4'))).path).toBe('/files/docs/renamed.bin');
    expect((await upload(u, '/files', 'root.txt', text('5'))).path).toBe('/files/root.txt');
    await expect(upload(u, '/files/x/', '', text('6'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file' } });
    await expect(upload(u, undefined, '..', text('7'))).rejects.toMatchObject({ code: 'INVALID_PATH' });
  });

  it('uploads — onConflict error, overwrite and uuid', async () => {
    const u = newUserId();
    await upload(u, undefined, 'notes.md', text('one'));
    await expect(upload(u, undefined, 'notes.md', text('two'))).rejects.toMatchObject({ code: 'FILE_EXISTS', details: { path: '/files/notes.md' } });
    expect(await content(u, '/files/notes.md')).toBe('one');
    await upload(u, undefined, 'notes.md', text('three'), 'overwrite');
    expect(await content(u, '/files/notes.md')).toBe('three');
    const renamed = await upload(u, undefined, 'notes.md', text('four'), 'uuid');
    expect(renamed.path).toMatch(/^\/files\/notes-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.md$/);
    expect((await upload(u, undefined, 'fresh.md', text('5'), 'uuid')).path).toBe('/files/fresh.md');
  });

  it('uploads — a file never lands under a file, nor replaces a directory', async () => {
    const u = newUserId();
    await upload(u, '/files/a', 'x', text('file a'));
    await expect(upload(u, '/files/a/b/c.txt', 'x', text('no'))).rejects.toMatchObject({ code: 'PATH_CONFLICT', details: { path: '/files/a' } });
    await upload(u, '/files/dir/inner.txt', 'x', text('in dir'));
    await expect(upload(u, undefined, 'dir', text('no'), 'overwrite')).rejects.toMatchObject({ code: 'PATH_CONFLICT' });
    expect((await upload(u, undefined, 'dir', text('renamed'), 'uuid')).path).toMatch(/^\/files\/dir-[0-9a-f-]{36}$/);
  });

  it('uploads — of 10 concurrent error uploads to one new path exactly one wins', async () => {
    const u = newUserId();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => upload(u, '/files/race.txt', 'x', text(`writer ${i}`))));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(Array(9).fill('FILE_EXISTS'));
    expect(await content(u, '/files/race.txt')).toMatch(/^writer \d$/);
  });

  it('uploads — concurrent uploads of a file and of a file below it never both land', async () => {
    for (let round = 0; round < 5; round++) {
      const u = newUserId();
      const results = await Promise.allSettled([upload(u, '/files/p', 'x', text('file')), upload(u, '/files/p/q.txt', 'x', text('below'))]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    }
  });

  it('uploads — over the limit fails with PAYLOAD_TOO_LARGE and stores nothing; the limit itself is fine', async () => {
    const u = newUserId();
    await expect(upload(u, undefined, 'big.bin', bytes(8 * MiB + 1))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await expect(files.workspace.list(u, '/files/big.bin', false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect((await upload(u, undefined, 'exact.bin', bytes(8 * MiB))).size).toBe(8 * MiB);
  });

  it('uploads — a body that fails leaves no trace; a failed overwrite keeps the old content whole', async () => {
    const u = newUserId();
    const before = await allKeys();
    await expect(upload(u, undefined, 'gone.bin', bytes(7 * MiB, 64 * 1024, new Error('aborted')))).rejects.toThrow('aborted');
    await upload(u, undefined, 'keep.txt', text('original'));
    await expect(upload(u, undefined, 'keep.txt', bytes(6 * MiB, 64 * 1024, new Error('aborted')), 'overwrite')).rejects.toThrow('aborted');
    expect(await content(u, '/files/keep.txt')).toBe('original');
    const after = await allKeys();
    expect(after.filter((k) => !before.includes(k))).toHaveLength(1); // keep.txt only: no temporary keys left
  });

  it('uploads — multipart uploads racing to one new path: the loser is refused at its commit and leaves no bytes behind', async () => {
    const u = newUserId();
    const before = await allKeys();
    // 7 MiB each: two parts, so both are stored in full before either commits.
    const one = async function* () {
      yield* bytes(7 * MiB, 64 * 1024);
    };
    const two = async function* () {
      for await (const c of bytes(7 * MiB, 64 * 1024)) yield Buffer.alloc(c.byteLength, 7);
    };
    const results = await Promise.allSettled([upload(u, '/files/big/race.bin', 'x', one()), upload(u, '/files/big/race.bin', 'x', two())]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'FILE_EXISTS' });
    const stored = await collect(await files.workspace.download(u, '/files/big/race.bin', {}));
    const winner = results[0]!.status === 'fulfilled' ? await collect(one()) : await collect(two());
    expect(stored.equals(winner)).toBe(true);
    expect((await allKeys()).filter((k) => !before.includes(k))).toHaveLength(1);
  });

  it('uploads — uuid to a name that is taken while the bytes arrive gets a new name; the other file stays', async () => {
    const u = newUserId();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = async function* () {
      yield Buffer.from('uuid ');
      await gate;
      yield Buffer.from('upload');
    };
    const pending = upload(u, undefined, 'late.txt', slow(), 'uuid');
    await new Promise((r) => setTimeout(r, 200)); // the uuid upload has passed its first check
    await upload(u, undefined, 'late.txt', text('first'));
    release();
    const renamed = await pending;
    expect(renamed.path).toMatch(/^\/files\/late-[0-9a-f-]{36}\.txt$/);
    expect(await content(u, renamed.path)).toBe('uuid upload');
    expect(await content(u, '/files/late.txt')).toBe('first');
    expect(files.events.of(u).map((c) => c.type)).toEqual(['file.created', 'file.created']);
  });

  it('uploads — writeFile writes a small file and replaces an existing one', async () => {
    const u = newUserId();
    await files.uploads.writeFile(u, '/files/projects/P/CONTEXT.md', Buffer.from('# P\n'), true);
    await files.uploads.writeFile(u, '/files/projects/P/CONTEXT.md', Buffer.from('# P2\n'), true);
    expect(await content(u, '/files/projects/P/CONTEXT.md')).toBe('# P2\n');
    await expect(files.uploads.writeFile(u, '/files/projects/P/', Buffer.from(''), true)).rejects.toMatchObject({ code: 'INVALID_PATH' });
  });
});
