import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, tenantKey } from '@workspace/platform';
import { migrateOldLayout } from '../src/adapters/migration.js';
import { realFiles, tree, type Files } from './support.js';

let files: Files;
beforeAll(async () => {
  files = await realFiles();
});
afterAll(async () => files.close());

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const logger = createLogger('migration-test', 'silent');

describe('files migration', () => {
  it('migration — a bucket in the old layout is imported once, by one of several replicas, keeping every file and pin', async () => {
    const u = files.user();
    const tenant = tenantKey(u);
    const agent = `agt_${'b'.repeat(32)}`;
    const old: Record<string, string> = { 'notes.md': '# notes', 'dir/a.txt': 'a', 'dir/sub/b.txt': 'bb', 'projects/Home/CONTEXT.md': '# Home' };
    for (const [rel, content] of Object.entries(old)) await files.blobs.put(`ws/${tenant}/${rel}`, Buffer.from(content), 'text/plain');
    await files.blobs.put(`kn/${tenant}/${agent}/${sha('kn')}`, Buffer.from('kn'), 'text/plain');
    // Three replicas start at once: one imports, the others wait for it.
    await Promise.all([1, 2, 3].map(() => migrateOldLayout({ redis: files.redis, index: files.index, blobs: files.blobs, logger })));
    expect(await tree(files, u)).toEqual([
      '/files/dir/',
      '/files/dir/a.txt',
      '/files/dir/sub/',
      '/files/dir/sub/b.txt',
      '/files/notes.md',
      '/files/projects/',
      '/files/projects/Home/',
      '/files/projects/Home/CONTEXT.md',
    ]);
    const read = await files.workspace.read(u, '/files/dir/sub/b.txt');
    expect(read.content.toString()).toBe('bb');
    expect(await files.workspace.stat(u, '/files/notes.md')).toMatchObject({ size: 7, sha256: sha('# notes') });
    expect(Object.keys(await files.index.pinnedKnowledge(u, agent))).toEqual([sha('kn')]);
    // An imported file has a history like any other: overwriting it keeps its old bytes as a revision.
    const imported = (await files.revisions.list(u, '/files/notes.md')).revisions;
    expect(imported).toMatchObject([{ deleted: false, size: 7, sha256: sha('# notes') }]);
    await files.uploads.writeFile(u, '/files/notes.md', Buffer.from('new'), true);
    await files.sweeper.sweep();
    expect(await files.objects()).toContain(`ws/${tenant}/notes.md`);
    expect((await files.workspace.read(u, '/files/notes.md', imported[0]!.revision)).content.toString()).toBe('# notes');
    // A second start finds the bucket imported and changes nothing.
    await migrateOldLayout({ redis: files.redis, index: files.index, blobs: files.blobs, logger });
    expect((await files.workspace.read(u, '/files/notes.md')).content.toString()).toBe('new');
  });
});
