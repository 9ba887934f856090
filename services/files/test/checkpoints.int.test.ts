import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantKey } from '@workspace/platform';
import { RedisCheckpointIndex } from '../src/adapters/checkpoints.redis.js';
import { Checkpoints } from '../src/domain/checkpoints.js';
import { put, realFiles, tree, type Files } from './support.js';

let files: Files;
let checkpoints: Checkpoints;
beforeAll(async () => {
  // The cost test works on 10,000 files in 16 folders: past the default MAX_TREE_ENTRIES (10,000).
  files = await realFiles({ maxTreeEntries: 20_000 });
  const index = new RedisCheckpointIndex({ redis: files.redis, keys: files.index.keys, outbox: files.outbox, ...files.tuning });
  checkpoints = new Checkpoints({ index, maxCheckpoints: 10, retentionMs: 30 * 24 * 3600 * 1000 });
});
afterAll(async () => files.close());

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** N files under `root` straight into the index (their bytes are never read here), 16 folders of N/16. */
async function bigTree(userId: string, root: string, n: number): Promise<void> {
  const tenant = tenantKey(userId);
  for (let i = 0; i < n; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, n - i) }, (_, j) => {
        const k = i + j;
        const content = `file ${k}`;
        const entry = { size: content.length, mtime: Date.now(), sha256: sha(content), key: `b/t/${randomBytes(12).toString('hex')}`, revision: `rev_${randomBytes(16).toString('hex')}` };
        return files.index.importFile(tenant, `${root}/d${k % 16}/f${String(k).padStart(5, '0')}.txt`, entry);
      }),
    );
  }
}

describe('files checkpoints (index)', () => {
  it('cost — a checkpoint and a rewind of 10,000 files are each one bounded step with no byte copied', async () => {
    const u = files.user();
    const n = 10_000;
    await bigTree(u, '/files/big', n);
    const before = await tree(files, u, '/files/big');
    expect(before.filter((p) => p.endsWith('.txt'))).toHaveLength(n);
    const objects = (await files.objects()).length;
    let t = performance.now();
    const taken = await checkpoints.create(u, '/files/big', 'cost');
    const checkpointMs = performance.now() - t;
    expect(taken.files).toBe(n);
    // Every file changes place: the whole tree moves away, and a new file comes in.
    await files.workspace.move(u, 'move', { from: '/files/big', to: '/files/elsewhere', onConflict: 'error' });
    t = performance.now();
    const done = await checkpoints.rewind(u, '/files/big', taken.checkpointId);
    const rewindMs = performance.now() - t;
    expect(done).toMatchObject({ restored: n, removed: 0, unchanged: 0 });
    expect(await tree(files, u, '/files/big')).toEqual(before);
    t = performance.now();
    const undo = await checkpoints.rewind(u, '/files/big', done.checkpointId);
    const emptyMs = performance.now() - t;
    expect(undo).toMatchObject({ restored: 0, removed: n, unchanged: 0 });
    t = performance.now();
    const byTime = await checkpoints.rewind(u, '/files/big', new Date(Date.parse(taken.createdAt) + 1).toISOString());
    const timeMs = performance.now() - t;
    expect(byTime).toMatchObject({ restored: n, removed: 0 });
    expect((await files.objects()).length, 'no byte copied').toBe(objects);
    console.log(`checkpoint of ${n}: ${checkpointMs.toFixed(0)} ms; rewind to it: ${rewindMs.toFixed(0)} ms; rewind to an empty tree: ${emptyMs.toFixed(0)} ms; rewind to a time: ${timeMs.toFixed(0)} ms`);
  }, 300_000);

  it('rewind — to the modifiedAt a write shows gives that write: the entry\'s time is the time its history keeps (one clock per commit)', async () => {
    // The index's clock runs ahead of the uploader's: the time taken before the commit differed from the record's.
    const skewed = await realFiles({ clock: () => Date.now() + 40 });
    try {
      const index = new RedisCheckpointIndex({ redis: skewed.redis, keys: skewed.index.keys, outbox: skewed.outbox, ...skewed.tuning });
      const cps = new Checkpoints({ index, maxCheckpoints: 10, retentionMs: 30 * 24 * 3600 * 1000 });
      const u = skewed.user();
      for (let i = 0; i < 8; i++) {
        await put(skewed, u, '/files/w/a.txt', `version ${i}`, true);
        const [entry] = (await skewed.workspace.list(u, '/files/w/a.txt', false)).entries;
        const at = new Date(entry!.entry!.mtime).toISOString();
        await new Promise((r) => setTimeout(r, 60));
        await put(skewed, u, '/files/w/a.txt', 'later', true);
        await cps.rewind(u, '/files/w', at);
        expect((await skewed.workspace.read(u, '/files/w/a.txt')).content.toString('utf8'), `write ${i}`).toBe(`version ${i}`);
      }
    } finally {
      await skewed.close();
    }
  });
});
