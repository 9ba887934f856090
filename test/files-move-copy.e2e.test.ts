import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { pattern, upload } from './support/files.js';
import { buildTree, copy, download, list, move, ok, put, read, sha256, stat, UUID, wholeTreeIn, type Entry } from './support/files-api.js';
import { sharedStack, type SharedStack } from './support/stack.js';
import { unzip } from './support/zip.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
const paths = (entries: Entry[]) => entries.map((e) => e.path);

describe('files — move', () => {
  it('move — a file: lands at `to`, the source is gone, its bytes and sha256 come along, empty parents vanish', async () => {
    const u = await stack.user();
    const up = await put(stack, u, '/files/only/report.txt', 'quarterly numbers\n');
    const res = await move(u, '/files/only/report.txt', '/files/archive/2024/report.txt');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, from: '/files/only/report.txt', path: '/files/archive/2024/report.txt' });
    expect((await read(u, '/files/only/report.txt')).status).toBe(404);
    expect((await u.request('GET', '/v1/agent/files?path=/files/only')).status, 'a directory exists only while it holds something').toBe(404);
    expect((await read(u, '/files/archive/2024/report.txt')).body.content).toBe('quarterly numbers\n');
    expect(await stat(u, '/files/archive/2024/report.txt')).toMatchObject({ size: up.size, sha256: up.sha256 });
    expect(paths(await list(u, '/files/archive', { recursive: true }))).toEqual(['/files/archive/2024', '/files/archive/2024/report.txt']);
  });

  it('move — a file\'s mimeType follows its new name, in the listing and the download', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/notes.txt', '# Title\n');
    expect((await stat(u, '/files/notes.txt'))?.mimeType).toBe('text/plain');
    await ok(move(u, '/files/notes.txt', '/files/notes.md'));
    expect((await stat(u, '/files/notes.md'))?.mimeType).toBe('text/markdown');
    const got = await download(stack.url, u, '/files/notes.md');
    expect(got.headers.get('content-type')).toBe('text/markdown');
    expect(got.headers.get('content-disposition')).toContain('filename="notes.md"');
    expect(got.bytes.toString()).toBe('# Title\n');
    await ok(move(u, '/files/notes.md', '/files/notes'));
    expect((await stat(u, '/files/notes'))?.mimeType).toBe('application/octet-stream');
    // Source files are text (docs/api/files.md#media-types): `.ts` was an MPEG transport stream.
    await ok(move(u, '/files/notes', '/files/notes.ts'));
    expect((await stat(u, '/files/notes.ts'))?.mimeType).toBe('text/x-typescript');
    expect((await download(stack.url, u, '/files/notes.ts')).headers.get('content-type')).toBe('text/x-typescript');
    await ok(move(u, '/files/notes.ts', '/files/Dockerfile'));
    expect((await stat(u, '/files/Dockerfile'))?.mimeType).toBe('text/x-dockerfile');
  });

  it('move — a directory with everything below it, to a parent that does not exist yet; a trailing slash is dropped', async () => {
    const u = await stack.user();
    const a = await put(stack, u, '/files/proj/a.txt', 'a');
    const b = await put(stack, u, '/files/proj/sub/deep/b.md', 'bb');
    await put(stack, u, '/files/proj2/stays.txt', 'not below /files/proj');
    const res = await move(u, '/files/proj/', '/files/new/place/proj');
    expect(res.body).toEqual({ success: true, from: '/files/proj', path: '/files/new/place/proj' });
    expect((await u.request('GET', '/v1/agent/files?path=/files/proj')).status).toBe(404);
    const moved = await list(u, '/files/new/place/proj', { recursive: true });
    expect(paths(moved)).toEqual([
      '/files/new/place/proj/a.txt',
      '/files/new/place/proj/sub',
      '/files/new/place/proj/sub/deep',
      '/files/new/place/proj/sub/deep/b.md',
    ]);
    expect(moved.find((e) => e.name === 'a.txt')?.sha256).toBe(a.sha256);
    expect(moved.find((e) => e.name === 'b.md')).toMatchObject({ sha256: b.sha256, size: 2, mimeType: 'text/markdown' });
    expect((await read(u, '/files/new/place/proj/sub/deep/b.md')).body.content).toBe('bb');
    expect((await read(u, '/files/proj2/stays.txt')).body.content).toBe('not below /files/proj');
    // Moving a sibling whose name extends another's is no move "into itself".
    expect((await move(u, '/files/proj2', '/files/proj2-renamed')).status).toBe(200);
  });

  it('move — a file onto a file: error (default) → 409 FILE_EXISTS, overwrite replaces, uuid renames', async () => {
    const u = await stack.user();
    const src = await put(stack, u, '/files/in/draft.md', 'new text');
    const dst = await put(stack, u, '/files/out/draft.md', 'old text');
    for (const onConflict of [undefined, 'error']) {
      const res = await move(u, '/files/in/draft.md', '/files/out/draft.md', onConflict);
      expect(res.status, String(onConflict)).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'FILE_EXISTS', details: { path: '/files/out/draft.md' } });
    }
    expect((await stat(u, '/files/in/draft.md'))?.sha256, 'a refused move leaves the source').toBe(src.sha256);
    expect((await stat(u, '/files/out/draft.md'))?.sha256).toBe(dst.sha256);

    const renamed = await move(u, '/files/in/draft.md', '/files/out/draft.md', 'uuid');
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.path).toMatch(new RegExp(`^/files/out/draft-${UUID}\\.md$`));
    expect(renamed.body.from).toBe('/files/in/draft.md');
    expect((await read(u, renamed.body.path)).body.content).toBe('new text');
    expect((await read(u, '/files/out/draft.md')).body.content).toBe('old text');
    expect((await read(u, '/files/in/draft.md')).status).toBe(404);

    const over = await move(u, renamed.body.path, '/files/out/draft.md', 'overwrite');
    expect(over.body).toEqual({ success: true, from: renamed.body.path, path: '/files/out/draft.md' });
    expect((await read(u, '/files/out/draft.md')).body.content).toBe('new text');
    expect(paths(await list(u, '/files/out'))).toEqual(['/files/out/draft.md']);

    await put(stack, u, '/files/free.txt', 'f');
    expect((await move(u, '/files/free.txt', '/files/out/free.txt', 'uuid')).body.path, 'no conflict keeps the name').toBe('/files/out/free.txt');
  });

  it('move — a directory never merges or replaces: onto anything → 409 PATH_CONFLICT; so is a file onto a directory and anything under a file', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/d1/a.txt', 'a');
    await put(stack, u, '/files/d2/b.txt', 'b');
    await put(stack, u, '/files/plain.txt', 'p');
    const before = paths(await list(u, '/files', { recursive: true }));
    const conflicts: [string, string][] = [
      ['/files/d1', '/files/d2'], // directory onto a directory
      ['/files/d1', '/files/plain.txt'], // directory onto a file
      ['/files/plain.txt', '/files/d2'], // file onto a directory
      ['/files/d1', '/files/plain.txt/d1'], // directory under a file
      ['/files/d2/b.txt', '/files/plain.txt/b.txt'], // file under a file
    ];
    for (const [from, to] of conflicts) {
      for (const onConflict of [undefined, 'error', 'overwrite', 'uuid']) {
        const res = await move(u, from, to, onConflict);
        expect(res.status, `${from} → ${to} (${onConflict}): ${res.text}`).toBe(409);
        expect(res.body.error.code, `${from} → ${to} (${onConflict})`).toBe('PATH_CONFLICT');
      }
    }
    expect(paths(await list(u, '/files', { recursive: true })), 'nothing moved').toEqual(before);
  });

  it('move — bad requests: /files as from or to, into itself, to itself, a missing from, bad bodies', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/dir/sub/x.txt', 'x');
    await put(stack, u, '/files/f.txt', 'f');
    const invalid: [string, string][] = [
      ['/files', '/files/elsewhere'],
      ['/files/', '/files/elsewhere'],
      ['/files/dir', '/files'],
      ['/files/f.txt', '/files/'],
      ['/files/dir', '/files/dir'],
      ['/files/dir', '/files/dir/'],
      ['/files/f.txt', '/files/f.txt'],
      ['/files/dir', '/files/dir/sub/dir'],
      ['/files/dir', '/files/dir/inner'],
      ['/files/dir/../f.txt', '/files/g.txt'],
      ['/files/f.txt', '/files/a//b'],
      ['/files/f.txt', '/filesx/f.txt'],
      ['/files/f.txt', `/files/${'n'.repeat(256)}`],
    ];
    for (const [from, to] of invalid) {
      const res = await move(u, from, to);
      expect(res.status, `${from} → ${to}: ${res.text}`).toBe(400);
      expect(res.body.error.code, `${from} → ${to}`).toBe('INVALID_PATH');
    }
    const missing = await move(u, '/files/nothing.txt', '/files/something.txt');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('FILE_NOT_FOUND');
    const badBodies: [unknown, string][] = [
      [{ to: '/files/g.txt' }, 'from'],
      [{ from: '/files/f.txt' }, 'to'],
      [{ from: '/files/f.txt', to: '/files/g.txt', onConflict: 'replace' }, 'onConflict'],
      [{ from: '/files/f.txt', to: '/files/g.txt', recursive: true }, 'recursive'],
      [{ from: 42, to: '/files/g.txt' }, 'from'],
    ];
    for (const [body, field] of badBodies) {
      const res = await u.request('POST', '/v1/agent/files/move', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    expect((await u.request('POST', '/v1/agent/files/move', 'from=/files/f.txt', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
    expect(paths(await list(u, '/files', { recursive: true })).filter((p) => !p.startsWith('/files/projects'))).toEqual(['/files/dir', '/files/dir/sub', '/files/dir/sub/x.txt', '/files/f.txt']);
  });

  it('move — a case-only rename works, for a file and a directory', async () => {
    const u = await stack.user();
    const up = await put(stack, u, '/files/docs/readme.txt', 'hello');
    expect((await move(u, '/files/docs/readme.txt', '/files/docs/README.txt')).body.path).toBe('/files/docs/README.txt');
    expect(paths(await list(u, '/files/docs'))).toEqual(['/files/docs/README.txt']);
    expect((await stat(u, '/files/docs/README.txt'))?.sha256).toBe(up.sha256);
    expect((await move(u, '/files/docs', '/files/Docs')).body.path).toBe('/files/Docs');
    expect(paths(await list(u, '/files')).filter((p) => p.toLowerCase() === '/files/docs')).toEqual(['/files/Docs']);
    expect((await read(u, '/files/Docs/README.txt')).body.content).toBe('hello');
  });

  it('move — another user\'s file is not found, and nothing of theirs can be reached or replaced', async () => {
    const a = await stack.user();
    const b = await stack.user();
    await put(stack, a, '/files/mine.txt', 'a');
    await put(stack, b, '/files/theirs.txt', 'b');
    expect((await move(b, '/files/mine.txt', '/files/stolen.txt')).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await copy(b, '/files/mine.txt', '/files/stolen.txt')).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await move(b, '/files/theirs.txt', '/files/mine.txt')).status, 'a\'s file is no conflict for b').toBe(200);
    expect((await read(a, '/files/mine.txt')).body.content).toBe('a');
  });
});

describe('files — copy', () => {
  it('copy — a file: the source stays, the copy has its bytes; from then on the two are independent', async () => {
    const u = await stack.user();
    const src = await put(stack, u, '/files/orig.txt', 'original bytes');
    const res = await copy(u, '/files/orig.txt', '/files/backup/orig.md');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, from: '/files/orig.txt', path: '/files/backup/orig.md' });
    expect(await stat(u, '/files/backup/orig.md')).toMatchObject({ size: src.size, sha256: src.sha256, mimeType: 'text/markdown' });
    expect(await stat(u, '/files/orig.txt')).toMatchObject({ sha256: src.sha256, mimeType: 'text/plain' });

    const changed = await put(stack, u, '/files/backup/orig.md', 'the copy changed');
    expect(changed.sha256).toBe(sha256('the copy changed'));
    expect((await stat(u, '/files/orig.txt'))?.sha256, 'overwriting the copy leaves the source').toBe(src.sha256);
    expect((await download(stack.url, u, '/files/orig.txt')).sha256).toBe(src.sha256);

    await put(stack, u, '/files/orig.txt', 'the source changed');
    expect((await download(stack.url, u, '/files/backup/orig.md')).bytes.toString()).toBe('the copy changed');
    await copy(u, '/files/orig.txt', '/files/second.txt');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/orig.txt')).status).toBe(200);
    const second = await download(stack.url, u, '/files/second.txt');
    expect(second.status, 'deleting the source leaves the copy').toBe(200);
    expect(second.bytes.toString()).toBe('the source changed');
  });

  it('copy — a directory, whole; the two trees are independent afterwards', async () => {
    const u = await stack.user();
    const x = await put(stack, u, '/files/tpl/x.txt', 'x');
    const y = await put(stack, u, '/files/tpl/sub/y.txt', 'y');
    const res = await copy(u, '/files/tpl', '/files/job1');
    expect(res.body).toEqual({ success: true, from: '/files/tpl', path: '/files/job1' });
    const copied = await list(u, '/files/job1', { recursive: true });
    expect(copied.map((e) => [e.path, e.sha256])).toEqual([
      ['/files/job1/sub', undefined],
      ['/files/job1/sub/y.txt', y.sha256],
      ['/files/job1/x.txt', x.sha256],
    ]);
    await put(stack, u, '/files/job1/x.txt', 'changed in the copy');
    await u.request('DELETE', '/v1/agent/files?path=/files/job1/sub&recursive=true');
    const source = await list(u, '/files/tpl', { recursive: true });
    expect(source.map((e) => [e.path, e.sha256])).toEqual([
      ['/files/tpl/sub', undefined],
      ['/files/tpl/sub/y.txt', y.sha256],
      ['/files/tpl/x.txt', x.sha256],
    ]);
  });

  it('copy — the same conflict rules as move', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/a.txt', 'a');
    await put(stack, u, '/files/b.txt', 'b');
    await put(stack, u, '/files/d/in.txt', 'in');
    await put(stack, u, '/files/e/in.txt', 'e');
    const exists = await copy(u, '/files/a.txt', '/files/b.txt');
    expect(exists.status).toBe(409);
    expect(exists.body.error).toMatchObject({ code: 'FILE_EXISTS', details: { path: '/files/b.txt' } });
    expect((await copy(u, '/files/a.txt', '/files/b.txt', 'uuid')).body.path).toMatch(new RegExp(`^/files/b-${UUID}\\.txt$`));
    expect((await copy(u, '/files/a.txt', '/files/b.txt', 'overwrite')).status).toBe(200);
    expect((await read(u, '/files/b.txt')).body.content).toBe('a');
    expect((await read(u, '/files/a.txt')).body.content).toBe('a');
    for (const [from, to] of [['/files/d', '/files/e'], ['/files/d', '/files/a.txt'], ['/files/a.txt', '/files/d'], ['/files/d', '/files/a.txt/d']]) {
      const res = await copy(u, from!, to!, 'overwrite');
      expect(res.status, `${from} → ${to}`).toBe(409);
      expect(res.body.error.code).toBe('PATH_CONFLICT');
    }
    for (const [from, to] of [['/files/d', '/files/d/copy'], ['/files', '/files/all'], ['/files/a.txt', '/files'], ['/files/a.txt', '/files/a.txt']]) {
      const res = await copy(u, from!, to!);
      expect(res.status, `${from} → ${to}`).toBe(400);
      expect(res.body.error.code).toBe('INVALID_PATH');
    }
    expect((await copy(u, '/files/none', '/files/x')).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await read(u, '/files/e/in.txt')).body.content).toBe('e');
  });
});

describe('files — move and copy copy no bytes', () => {
  it('cost — a 128 MiB file moves and copies in far less time than its bytes would take to copy, and the copy has them all', async () => {
    const u = await stack.user();
    const hash = createHash('sha256');
    async function* sent() {
      for await (const chunk of pattern(128 * 1024 * 1024)) {
        hash.update(chunk);
        yield chunk;
      }
    }
    const up = await upload(stack.url, u, { filename: 'big.bin', content: sent() }, { path: '/files/big/' });
    expect(up.status, up.text).toBe(200);
    const digest = hash.digest('hex');
    const timed = async (call: () => Promise<string>) => {
      const t = Date.now();
      await call();
      return Date.now() - t;
    };
    // The store writes ~65 MiB/s here: copying 128 MiB of bytes would take about two seconds.
    const moveMs = await timed(() => ok(move(u, '/files/big/big.bin', '/files/moved/big.bin')));
    const copyMs = await timed(() => ok(copy(u, '/files/moved/big.bin', '/files/copied/big.bin')));
    expect({ moveMs: moveMs < 1000, copyMs: copyMs < 1000 }, `move ${moveMs} ms, copy ${copyMs} ms`).toEqual({ moveMs: true, copyMs: true });
    expect((await stat(u, '/files/copied/big.bin'))?.sha256).toBe(digest);
    const got = await fetch(`${stack.url}/v1/agent/files/download?path=/files/copied/big.bin`, { headers: { authorization: `Bearer ${u.token}` } });
    const check = createHash('sha256');
    for await (const chunk of got.body as AsyncIterable<Uint8Array>) check.update(chunk);
    expect(check.digest('hex')).toBe(digest);
  }, 60_000);
});

describe('files — move and copy under concurrency', () => {
  it('atomic move — a directory of 2,048 files moves while others list it: every listing holds exactly one tree, whole', async () => {
    const u = await stack.user();
    const tree = await buildTree(stack, u, '/files/src', 32, 6);
    expect(tree.files.size).toBe(2048);
    const one = [...tree.files.keys()][777]!;
    const seen: string[] = [];
    const reads: string[] = [];
    let listings = 0;
    let running = true;
    const lister = async () => {
      while (running) {
        const entries = await list(u, '/files', { recursive: true, includeStats: false });
        seen.push(wholeTreeIn(entries, '/files/src', '/files/dst', tree));
        listings++;
      }
    };
    // Old path first, then the new: the file is at one of them at every moment, so a 404 at the
    // old one means the move is done and the new one must answer.
    const reader = async () => {
      while (running) {
        const old = await read(u, `/files/src/${one}`);
        if (old.status === 200) continue;
        const now = await read(u, `/files/dst/${one}`);
        reads.push(`${old.status}/${now.status}`);
      }
    };
    const workers = [lister(), lister(), reader()];
    await expect.poll(() => listings, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(3);
    const res = await move(u, '/files/src', '/files/dst');
    expect(res.status, res.text).toBe(200);
    const after = listings;
    await expect.poll(() => listings, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(after + 3);
    running = false;
    await Promise.all(workers);
    const broken = seen.filter((s) => s !== 'a' && s !== 'b');
    expect(broken, 'listings that saw both trees, neither, or part of one').toEqual([]);
    expect(seen).toContain('a');
    expect(seen).toContain('b');
    expect(reads.filter((r) => r !== '404/200'), 'reads that found the file at neither path').toEqual([]);
    const final = await list(u, '/files/dst', { recursive: true });
    expect(final.filter((e) => e.type === 'file').every((e) => e.sha256 === tree.files.get(e.path.slice('/files/dst/'.length)))).toBe(true);
  });

  it('atomic move — a listing longer than one read of the index (29,000+ entries) still sees exactly one tree, whole', async () => {
    const u = await stack.user();
    // The filler sorts between the two places of the tree, so a listing read in steps would
    // miss the tree (moved behind its position) or see it twice (moved ahead of it). Three trees
    // of 9,216 files (each within MAX_TREE_ENTRIES, docs/api/files.md#bounded-tree-work).
    await buildTree(stack, u, '/files/m', 36, 8);
    await ok(copy(u, '/files/m', '/files/n'));
    await ok(copy(u, '/files/m', '/files/o'));
    const tree = await buildTree(stack, u, '/files/z-src', 8, 3);
    const seen: string[] = [];
    let running = true;
    let moves = 0;
    const mover = async () => {
      let at = '/files/z-src';
      while (running) {
        const to = at === '/files/z-src' ? '/files/a-dst' : '/files/z-src';
        await ok(move(u, at, to));
        at = to;
        moves++;
      }
    };
    const moving = mover();
    try {
      for (let i = 0; i < 8; i++) {
        const entries = await list(u, '/files', { recursive: true, includeStats: false });
        expect(entries.length).toBeGreaterThan(20_480);
        seen.push(wholeTreeIn(entries, '/files/z-src', '/files/a-dst', tree));
      }
    } finally {
      running = false;
      await moving;
    }
    expect(moves).toBeGreaterThan(8);
    expect(seen.filter((x) => x !== 'a' && x !== 'b'), 'listings that saw both trees, neither, or part of one').toEqual([]);
  }, 120_000);

  it('atomic move — an export running while a directory of its folder moves holds exactly one of the two trees, whole', async () => {
    const u = await stack.user();
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Atomic' })).status).toBe(201);
    const root = '/files/projects/Atomic';
    const tree = await buildTree(stack, u, `${root}/m-src`, 16, 5);
    const res = await fetch(`${stack.url}/v1/agent/projects/export?name=Atomic`, { headers: { authorization: `Bearer ${u.token}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    if (first.value) chunks.push(first.value);
    // The archive has begun; the tree moves behind the export's position, then ahead of it.
    await ok(move(u, `${root}/m-src`, `${root}/a-dst`));
    await ok(move(u, `${root}/a-dst`, `${root}/z-dst`));
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    const names = (await unzip(Buffer.concat(chunks))).map((e) => e.name);
    const asEntries = names.filter((n) => n !== 'Atomic/CONTEXT.md').map((n) => ({ path: `${root}/${n.slice('Atomic/'.length)}`, name: '', type: 'file' as const }));
    const dirs = new Set<string>();
    for (const e of asEntries) for (let d = e.path.slice(0, e.path.lastIndexOf('/')); d.length > root.length; d = d.slice(0, d.lastIndexOf('/'))) dirs.add(d);
    const entries = [...asEntries, ...[...dirs].map((d) => ({ path: d, name: '', type: 'directory' as const }))];
    const places = ['m-src', 'a-dst', 'z-dst'];
    const filesIn = Object.fromEntries(places.map((t) => [t, asEntries.filter((e) => e.path.startsWith(`${root}/${t}/`)).length]));
    const whole = places.filter((t) => wholeTreeIn(entries, `${root}/${t}`, `${root}/none`, tree) === 'a');
    expect({ whole: whole.length, files: names.length - 1 }, `files of the tree in the export, by place: ${JSON.stringify(filesIn)}`).toEqual({ whole: 1, files: tree.files.size });
  });

  it('races — 20 concurrent moves and uploads onto 4 names in one folder: one winner per name, the rest 409, losers untouched', async () => {
    const u = await stack.user();
    const names = ['t0.txt', 't1.txt', 't2.txt', 't3.txt'];
    type Op = { name: string; kind: 'move' | 'upload'; content: string; from?: string };
    const ops: Op[] = [];
    for (const name of names) {
      for (let j = 0; j < 3; j++) ops.push({ name, kind: 'move', content: `move ${name} ${j}`, from: `/files/pool/${name}-${j}` });
      for (let j = 0; j < 2; j++) ops.push({ name, kind: 'upload', content: `upload ${name} ${j}` });
    }
    await Promise.all(ops.filter((o) => o.from).map((o) => put(stack, u, o.from!, o.content)));
    await put(stack, u, '/files/race/other.txt', 'already there');
    const results = await Promise.all(
      ops.map((o) => (o.kind === 'move' ? move(u, o.from!, `/files/race/${o.name}`) : upload(stack.url, u, { filename: o.name, content: o.content }, { path: '/files/race/' }))),
    );
    for (const name of names) {
      const mine = ops.map((o, i) => ({ o, r: results[i]! })).filter(({ o }) => o.name === name);
      const statuses = mine.map(({ r }) => r.status).sort();
      expect(statuses, `${name}: ${mine.map(({ r }) => r.text).join(' | ')}`).toEqual([200, 409, 409, 409, 409]);
      for (const { r } of mine.filter(({ r }) => r.status === 409)) expect(r.body.error).toMatchObject({ code: 'FILE_EXISTS', details: { path: `/files/race/${name}` } });
      const winner = mine.find(({ r }) => r.status === 200)!;
      expect((await stat(u, `/files/race/${name}`))?.sha256, name).toBe(sha256(winner.o.content));
      for (const { o, r } of mine.filter(({ o }) => o.kind === 'move')) {
        const source = await stat(u, o.from!);
        if (r.status === 200) expect(source, `${o.from} moved`).toBeUndefined();
        else expect(source?.sha256, `${o.from} lost the race and stays`).toBe(sha256(o.content));
      }
    }
    expect(paths(await list(u, '/files/race'))).toEqual(['/files/race/other.txt', ...names.map((n) => `/files/race/${n}`)]);
  });
});
