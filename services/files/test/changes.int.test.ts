import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { put, realFiles, type Files } from './support.js';

/** A history kept short (10 changes, older than 1 ms goes): the retention trims it as writes come. */
let files: Files;
beforeAll(async () => {
  files = await realFiles({ keepChanges: 10, keepChangesMs: 1 });
});
afterAll(async () => files.close());

describe('files changes (index)', () => {
  it('changes — a cursor older than the retained history is 410 CURSOR_EXPIRED once the retention trimmed it (it was read as if nothing was lost)', async () => {
    const u = files.user();
    await put(files, u, '/files/first.txt', 'x');
    const old = await files.changes.cursor(u, '/files');
    // Past a radix node (100 entries): the approximate trim removes whole nodes only.
    for (let i = 0; i < 300; i++) await put(files, u, `/files/f${i}.txt`, String(i));
    expect(await files.redis.xlen(`${files.index.keys.prefix(u)}log`)).toBeLessThan(300);
    await expect(files.changes.read(u, old, 1000, 0)).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
    // A cursor taken now reads on as usual.
    const fresh = await files.changes.cursor(u, '/files');
    await put(files, u, '/files/last.txt', 'y');
    const read = await files.changes.read(u, fresh, 1000, 0);
    expect(read.changes.map((c) => c.path)).toEqual(['/files/last.txt']);
  });
});
