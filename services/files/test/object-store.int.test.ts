import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, collect, MiB, realFiles } from './support.js';

let files: Awaited<ReturnType<typeof realFiles>>;
beforeAll(async () => {
  files = await realFiles();
});
afterAll(async () => {
  await files?.close();
});

/** Keys that break naive S3 clients: URL-special characters, spaces at the ends, XML-special, astral. */
const HOSTILE = ['a+b', '100%', '%41', ' lead', 'trail ', 'x&y<z>"\'', 'q?a=1#f', '研究', '🚀 rocket', 'tab\u00a0nbsp', '~!@$^*()[]{};,=', '007', '1e5', 'true'];

describe('object store on S3', () => {
  it('object store — hostile keys round-trip through write, stat, list, read, copy and remove', async () => {
    const prefix = 'hostile/';
    for (const name of HOSTILE) await files.store.write(prefix + name, bytes(10), { contentType: 'text/plain' });
    const listed: string[] = [];
    for await (const page of files.store.list(prefix, { recursive: false })) listed.push(...page.objects.map((o) => o.key));
    expect(listed.sort()).toEqual(HOSTILE.map((n) => prefix + n).sort());
    for (const name of HOSTILE) {
      expect(await files.store.stat(prefix + name), name).toMatchObject({ size: 10 });
      expect((await collect(await files.store.read(prefix + name))).byteLength, name).toBe(10);
      await files.store.copy(prefix + name, `copy/${name}`, 10);
      expect(await files.store.stat(`copy/${name}`), name).toMatchObject({ size: 10 });
    }
    await files.store.remove(HOSTILE.map((n) => prefix + n));
    expect(await files.store.hasAny(prefix)).toBe(false);
  });

  it('object store — listing with a delimiter gives files and directories, in byte order, across pages', async () => {
    for (const key of ['d/b', 'd/a/x', 'd/a/y', 'd/c/z', 'd/ä']) await files.store.write(key, bytes(1), { contentType: 'text/plain' });
    const pages = [];
    for await (const page of files.store.list('d/', { recursive: false })) pages.push(page);
    expect(pages.flatMap((p) => p.objects.map((o) => o.key))).toEqual(['d/b', 'd/ä']);
    expect(pages.flatMap((p) => p.prefixes)).toEqual(['d/a/', 'd/c/']);
    const all: string[] = [];
    for await (const page of files.store.list('d/', { recursive: true })) all.push(...page.objects.map((o) => o.key));
    expect(all).toEqual(['d/a/x', 'd/a/y', 'd/b', 'd/c/z', 'd/ä']);
  });

  it('object store — 2,500 keys list in byte order across pages, and a listing after a write sees it', async () => {
    const keys = Array.from({ length: 2500 }, (_, i) => `many/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => files.store.write(k, bytes(1), { contentType: 'text/plain' })));
    const listAll = async () => {
      const got: string[] = [];
      let pages = 0;
      for await (const page of files.store.list('many/', { recursive: true })) {
        got.push(...page.objects.map((o) => o.key));
        pages++;
      }
      return { got, pages };
    };
    const first = await listAll();
    expect(first.pages).toBeGreaterThanOrEqual(3);
    expect(first.got).toEqual(keys);
    await files.store.remove(['many/0000']);
    await files.store.write('many/9999', bytes(1), { contentType: 'text/plain' });
    expect((await listAll()).got).toEqual([...keys.slice(1), 'many/9999']);
  }, 60_000);

  it('object store — a body longer than a part is a multipart upload with the exact bytes', async () => {
    const size = 12 * MiB + 12345;
    expect(await files.store.write('big/one', bytes(size, 100_000), { contentType: 'application/octet-stream' })).toEqual({ size });
    const back = await collect(await files.store.read('big/one'));
    expect(back.equals(await collect(bytes(size, 100_000)))).toBe(true);
    const range = await collect(await files.store.read('big/one', { range: { offset: 5 * MiB - 3, length: 10 } }));
    expect(range.equals((await collect(bytes(size, 100_000))).subarray(5 * MiB - 3, 5 * MiB + 7))).toBe(true);
  });

  it('object store — a body that fails midway leaves no object behind, single part or multipart', async () => {
    for (const size of [100, 11 * MiB]) {
      const key = `broken/${size}`;
      await expect(files.store.write(key, bytes(size, 64 * 1024, new Error('client went away')), { contentType: 'text/plain' })).rejects.toThrow('client went away');
      expect(await files.store.stat(key)).toBeUndefined();
    }
  });

  it('object store — read with a stale etag refuses instead of mixing versions', async () => {
    await files.store.write('etag/f', bytes(5), { contentType: 'text/plain' });
    const before = await files.store.stat('etag/f');
    await files.store.write('etag/f', bytes(6), { contentType: 'text/plain' });
    await expect(files.store.read('etag/f', { etag: before!.etag })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(files.store.read('etag/none')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });
});
