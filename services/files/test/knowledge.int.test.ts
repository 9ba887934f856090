import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantKey } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { RedisRemovedAgents } from '../src/adapters/removed-agents.redis.js';
import { Knowledge } from '../src/domain/knowledge.js';
import type { ObjectStore } from '../src/domain/ports.js';
import { collect, realFiles } from './support.js';

let files: Awaited<ReturnType<typeof realFiles>>;
/** The real store, with its server-side copies counted. */
let copies: string[];
let knowledge: Knowledge;

beforeAll(async () => {
  files = await realFiles();
  copies = [];
  const store = files.store;
  const counted: ObjectStore = {
    stat: (key) => store.stat(key),
    list: (prefix, options) => store.list(prefix, options),
    hasAny: (prefix) => store.hasAny(prefix),
    read: (key, options) => store.read(key, options),
    write: (key, body, options) => store.write(key, body, options),
    remove: (keys) => store.remove(keys),
    copy: (from, to, size) => {
      if (to.startsWith('kn/')) copies.push(to);
      return store.copy(from, to, size);
    },
  };
  knowledge = new Knowledge({ store: counted, lock: files.lock, removed: new RedisRemovedAgents(files.redis) });
});
afterAll(async () => {
  await files?.close();
});

const agentId = () => `agt_${randomBytes(16).toString('hex')}`;
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const put = (user: string, path: string, body: string | Buffer) =>
  files.uploads.writeFile(user, path, Buffer.from(body), true);
const copiesOf = async (user: string, agent: string) => {
  const keys: string[] = [];
  for await (const page of files.store.list(`kn/${tenantKey(user)}/${agent}/`, { recursive: true })) keys.push(...page.objects.map((o) => o.key));
  return keys.map((k) => k.slice(k.lastIndexOf('/') + 1)).sort();
};
const copyBytes = async (user: string, agent: string, digest: string) =>
  (await collect(await files.store.read(`kn/${tenantKey(user)}/${agent}/${digest}`))).toString('utf8');

describe('knowledge copies', () => {
  it('knowledge — pin returns path, size, sha256 and mimeType in order; equal bytes are copied once per Agent', async () => {
    const u = newUserId();
    const a = agentId();
    await put(u, '/files/notes.md', '# notes');
    await put(u, '/files/same/twin.txt', '# notes');
    await put(u, '/files/data.bin', 'other');
    const before = copies.length;
    const pinned = await knowledge.pin(u, a, ['/files/notes.md', '/files/same/twin.txt/', '/files/data.bin']);
    expect(pinned).toEqual([
      { path: '/files/notes.md', size: 7, sha256: sha('# notes'), mimeType: 'text/markdown' },
      { path: '/files/same/twin.txt', size: 7, sha256: sha('# notes'), mimeType: 'text/plain' },
      { path: '/files/data.bin', size: 5, sha256: sha('other'), mimeType: 'application/octet-stream' },
    ]);
    expect(copies.length - before).toBe(2);
    expect(await copiesOf(u, a)).toEqual([sha('# notes'), sha('other')].sort());

    // The same files again (a PATCH re-submitting them): same answer, nothing copied.
    expect(await knowledge.pin(u, a, ['/files/notes.md', '/files/data.bin'])).toEqual([pinned[0], pinned[2]]);
    expect(copies.length - before).toBe(2);
    // Another Agent owns copies of its own.
    const b = agentId();
    await knowledge.pin(u, b, ['/files/notes.md']);
    expect(await copiesOf(u, b)).toEqual([sha('# notes')]);
  });

  it('knowledge — copies are never listed among the workspace files', async () => {
    const u = newUserId();
    await put(u, '/files/k.md', 'k');
    await knowledge.pin(u, agentId(), ['/files/k.md']);
    expect((await files.workspace.list(u, '/files', true)).entries.map((e) => e.path)).toEqual(['/files/k.md']);
  });

  it('knowledge — a pinned copy keeps its bytes after the workspace file is overwritten or deleted; a new pin copies the new bytes', async () => {
    const u = newUserId();
    const a = agentId();
    await put(u, '/files/k.md', 'version 1');
    const [v1] = await knowledge.pin(u, a, ['/files/k.md']);
    await put(u, '/files/k.md', 'version two');
    const [v2] = await knowledge.pin(u, a, ['/files/k.md']);
    expect(v2).toEqual({ path: '/files/k.md', size: 11, sha256: sha('version two'), mimeType: 'text/markdown' });
    await files.workspace.delete(u, '/files/k.md', false);
    expect(await copyBytes(u, a, v1!.sha256)).toBe('version 1');
    expect(await copyBytes(u, a, v2!.sha256)).toBe('version two');
  });

  it('knowledge — a missing file, a directory and a bad path name the first failing path and its index', async () => {
    const u = newUserId();
    const a = agentId();
    await put(u, '/files/ok.md', 'ok');
    await put(u, '/files/dir/in.md', 'in');
    await expect(knowledge.pin(u, a, ['/files/ok.md', '/files/missing.md', '/files/dir'])).rejects.toMatchObject({
      code: 'FILE_NOT_FOUND',
      details: { path: '/files/missing.md', index: '1' },
    });
    await expect(knowledge.pin(u, a, ['/files/dir', '/files/missing.md'])).rejects.toMatchObject({ code: 'IS_A_DIRECTORY', details: { path: '/files/dir', index: '0' } });
    await expect(knowledge.pin(u, a, ['/files'])).rejects.toMatchObject({ code: 'IS_A_DIRECTORY', details: { index: '0' } });
    // Path rules are checked before any file is touched, whatever comes first.
    await expect(knowledge.pin(u, a, ['/files/missing.md', '/files/../etc'])).rejects.toMatchObject({ code: 'INVALID_PATH', details: { path: '/files/../etc', index: '1' } });
    await expect(knowledge.pin(u, a, ['/filesx'])).rejects.toMatchObject({ code: 'INVALID_PATH', details: { index: '0' } });
    await expect(knowledge.pin(u, 'agt_../x', ['/files/ok.md'])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'agentId' } });
    // Another user's file is simply not there.
    await expect(knowledge.pin(newUserId(), a, ['/files/ok.md'])).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('knowledge — removing an Agent removes its copies only, twice is fine, and a late pin brings nothing back', async () => {
    const u = newUserId();
    const [gone, kept] = [agentId(), agentId()];
    await put(u, '/files/a.md', 'a');
    await put(u, '/files/b.md', 'b');
    await knowledge.pin(u, gone, ['/files/a.md', '/files/b.md']);
    await knowledge.pin(u, kept, ['/files/a.md']);
    expect(await knowledge.removeAgent(u, gone)).toBe(2);
    expect(await copiesOf(u, gone)).toEqual([]);
    expect(await copiesOf(u, kept)).toEqual([sha('a')]);
    expect(await knowledge.removeAgent(u, gone)).toBe(0);
    await expect(knowledge.pin(u, gone, ['/files/a.md'])).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    expect(await copiesOf(u, gone)).toEqual([]);
    expect(await knowledge.removeAgent(u, 'not-an-agent')).toBe(0);
  });

  it('knowledge — 20 files of 1 MiB pinned concurrently with a removal of the Agent leave no copy behind', async () => {
    const u = newUserId();
    const a = agentId();
    const paths = Array.from({ length: 20 }, (_, i) => `/files/big/${i}.bin`);
    for (const [i, p] of paths.entries()) await put(u, p, randomBytes(1024 * 1024 - i));
    const pinning = knowledge.pin(u, a, paths).then(
      () => 'pinned',
      (err: { code?: string }) => err.code,
    );
    await knowledge.removeAgent(u, a);
    const outcome = await pinning;
    // Either the pin finished before the removal listed the copies, or it saw the mark.
    expect(['pinned', 'AGENT_NOT_FOUND']).toContain(outcome);
    if (outcome === 'pinned') await knowledge.removeAgent(u, a);
    expect(await copiesOf(u, a)).toEqual([]);
  });
});

describe('file change reports', () => {
  it('file events — upload, overwrite, uuid, writeFile and deletes report created, updated and deleted in order', async () => {
    const u = newUserId();
    const body = (s: string) => (async function* () {
      yield Buffer.from(s);
    })();
    await files.uploads.upload(u, { path: '/files/r.md', filename: 'x', onConflict: 'error' }, body('one'));
    await files.uploads.upload(u, { path: '/files/r.md', filename: 'x', onConflict: 'overwrite' }, body('three'));
    const renamed = await files.uploads.upload(u, { path: '/files/r.md', filename: 'x', onConflict: 'uuid' }, body('22'));
    await files.uploads.writeFile(u, '/files/d/c.md', Buffer.from('c'), false);
    await files.uploads.writeFile(u, '/files/d/e.md', Buffer.from('e'), false);
    await files.workspace.delete(u, '/files/r.md', false);
    await files.workspace.delete(u, '/files/d', true);
    await expect(files.workspace.delete(u, '/files/r.md', false)).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect(files.events.of(u)).toEqual([
      { type: 'file.created', path: '/files/r.md', size: 3 },
      { type: 'file.updated', path: '/files/r.md', size: 5 },
      { type: 'file.created', path: renamed.path, size: 2 },
      { type: 'file.created', path: '/files/d/c.md', size: 1 },
      { type: 'file.created', path: '/files/d/e.md', size: 1 },
      { type: 'file.deleted', path: '/files/r.md' },
      { type: 'file.deleted', path: '/files/d/c.md' },
      { type: 'file.deleted', path: '/files/d/e.md' },
    ]);
  });

  it('file events — a conflict or a failed upload reports nothing', async () => {
    const u = newUserId();
    await files.uploads.writeFile(u, '/files/x.md', Buffer.from('x'), false);
    await expect(files.uploads.writeFile(u, '/files/x.md', Buffer.from('y'), false)).rejects.toMatchObject({ code: 'FILE_EXISTS' });
    const failing = (async function* () {
      yield Buffer.from('partial');
      throw new Error('client went away');
    })();
    await expect(files.uploads.upload(u, { path: '/files/y.md', filename: 'y', onConflict: 'error' }, failing)).rejects.toThrow('client went away');
    expect(files.events.of(u)).toEqual([{ type: 'file.created', path: '/files/x.md', size: 1 }]);
  });
});
