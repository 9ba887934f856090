import { beforeAll, describe, expect, it } from 'vitest';
import { pattern, q, upload } from './support/files.js';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';
import { unzip } from './support/zip.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
const read = async (u: ApiUser, path: string) => (await u.request('GET', `/v1/agent/files/read?path=${q(path)}`)).body;
const exportZip = (u: ApiUser, name: string) => fetch(`${stack.url}/v1/agent/projects/export?name=${q(name)}`, { headers: { authorization: `Bearer ${u.token}` } });

describe('projects — context files', () => {
  it('context — create writes /files/projects/<name>/CONTEXT.md before it returns', async () => {
    const u = await stack.user();
    const created = await u.request('POST', '/v1/agent/projects', { name: 'Research', goal: 'Find the answer', instructions: 'Cite sources.\nBe brief.' });
    expect(created.status).toBe(201);
    expect(await read(u, '/files/projects/Research/CONTEXT.md')).toEqual({
      path: '/files/projects/Research/CONTEXT.md',
      content: '# Research\n\n## Goal\n\nFind the answer\n\n## Instructions\n\nCite sources.\nBe brief.\n',
      encoding: 'utf-8',
    });
  });

  it('context — Home has its folder and context file from the first request', async () => {
    const u = await stack.user();
    const listing = await u.request('GET', '/v1/agent/files?path=/files/projects&recursive=true&includeStats=false');
    expect(listing.body.entries).toEqual([
      { path: '/files/projects/Home', name: 'Home', type: 'directory' },
      { path: '/files/projects/Home/CONTEXT.md', name: 'CONTEXT.md', type: 'file' },
    ]);
    expect((await read(u, '/files/projects/Home/CONTEXT.md')).content).toBe('# Home\n\n## Goal\n\n\n\n## Instructions\n\n\n');
  });

  it('context — later PATCHes do not rewrite it: it is the user\'s', async () => {
    const u = await stack.user();
    await u.request('POST', '/v1/agent/projects', { name: 'Notes', goal: 'first' });
    await upload(stack.url, u, { filename: 'CONTEXT.md', content: '# My own words\n' }, { path: '/files/projects/Notes/', onConflict: 'overwrite' });
    expect((await u.request('PATCH', '/v1/agent/projects', { name: 'notes', goal: 'second', instructions: 'new' })).status).toBe(200);
    expect((await read(u, '/files/projects/Notes/CONTEXT.md')).content).toBe('# My own words\n');
  });
});

describe('projects — export', () => {
  it('export — a ZIP of the project folder: files only, entries <name>/<path>, UTF-8 names flagged', async () => {
    const u = await stack.user();
    await u.request('POST', '/v1/agent/projects', { name: 'Research', goal: 'g' });
    await upload(stack.url, u, { filename: 'a.md', content: 'alpha' }, { path: '/files/projects/Research/notes/' });
    await upload(stack.url, u, { filename: '研究.txt', content: 'kenkyū' }, { path: '/files/projects/Research/' });
    await upload(stack.url, u, { filename: 'empty.txt', content: '' }, { path: '/files/projects/Research/deep/er/' });
    await upload(stack.url, u, { filename: 'outside.txt', content: 'not exported' }, { path: '/files/projects/' });
    const res = await exportZip(u, 'RESEARCH');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Research.zip"; filename*=UTF-8''Research.zip`);
    const entries = await unzip(Buffer.from(await res.arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual(['Research/CONTEXT.md', 'Research/deep/er/empty.txt', 'Research/notes/a.md', 'Research/研究.txt']);
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(byName.get('Research/notes/a.md')!.content.toString()).toBe('alpha');
    expect(byName.get('Research/研究.txt')!.content.toString()).toBe('kenkyū');
    expect(byName.get('Research/研究.txt')!.utf8).toBe(true);
    expect(byName.get('Research/deep/er/empty.txt')!.content.byteLength).toBe(0);
    expect(byName.get('Research/CONTEXT.md')!.content.toString()).toMatch(/^# Research\n/);
  });

  it('export — names that are not plain ASCII, or look like drive letters, survive', async () => {
    const u = await stack.user();
    for (const name of ['Plan 研究', 'todo:list', 'Plan: Q3', 'ab:c:d']) {
      expect((await u.request('POST', '/v1/agent/projects', { name })).status).toBe(201);
      const res = await exportZip(u, name);
      expect(res.status, name).toBe(200);
      const entries = await unzip(Buffer.from(await res.arrayBuffer()));
      expect(entries.map((e) => e.name), name).toEqual([`${name}/CONTEXT.md`]);
    }
    const res = await exportZip(u, 'plan 研究');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Plan __.zip"; filename*=UTF-8''Plan%20%E7%A0%94%E7%A9%B6.zip`);
  });

  it('export — an empty project folder is a valid empty ZIP; unknown projects are 404', async () => {
    const u = await stack.user();
    await u.request('POST', '/v1/agent/projects', { name: 'Bare' });
    await u.request('DELETE', '/v1/agent/files?path=/files/projects/Bare/CONTEXT.md');
    const res = await exportZip(u, 'Bare');
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(await unzip(bytes)).toEqual([]);
    const missing = await exportZip(u, 'Nope');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('PROJECT_NOT_FOUND');
    const other = await stack.user();
    expect((await exportZip(other, 'Bare')).status).toBe(404);
    expect((await other.request('GET', '/v1/agent/projects/export')).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'name' } });
  });

  it('export — streamed from one state of the folder: the first bytes arrive while the rest waits, and later changes do not leak in', async () => {
    const u = await stack.user();
    await u.request('POST', '/v1/agent/projects', { name: 'Stream' });
    await upload(stack.url, u, { filename: 'big.bin', content: pattern(32 * 1024 * 1024) }, { path: '/files/projects/Stream/' });
    const fillers = ['c1.txt', 'c2.txt', 'c3.txt', 'c4.txt', 'c5.txt', 'c6.txt'];
    for (const filler of fillers) await upload(stack.url, u, { filename: filler, content: filler }, { path: '/files/projects/Stream/' });
    await upload(stack.url, u, { filename: 'zzz.txt', content: 'before' }, { path: '/files/projects/Stream/' });
    const res = await exportZip(u, 'Stream');
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // The reader is paused: backpressure holds the archive inside big.bin, long before zzz.txt.
    // Change the folder now: the archive is of the folder as it was when the export began.
    await upload(stack.url, u, { filename: 'zzz.txt', content: 'after' }, { path: '/files/projects/Stream/', onConflict: 'overwrite' });
    await upload(stack.url, u, { filename: 'new.txt', content: 'new' }, { path: '/files/projects/Stream/' });
    const chunks: Uint8Array[] = [first.value!];
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    const entries = await unzip(Buffer.concat(chunks));
    expect(entries.map((e) => e.name)).toEqual(['Stream/CONTEXT.md', 'Stream/big.bin', ...fillers.map((f) => `Stream/${f}`), 'Stream/zzz.txt']);
    expect(entries.at(-1)!.content.toString()).toBe('before');
    expect(entries[1]!.content.byteLength).toBe(32 * 1024 * 1024);
    expect(entries[2]!.content.toString()).toBe('c1.txt');
  }, 120_000);
});
