import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { q } from './support/files.js';
import { byteOrder, copy, move, ok, put, sha256 } from './support/files-api.js';
import { sharedStack, type ApiResponse, type ApiUser, type SharedStack } from './support/stack.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});

interface Match {
  path: string;
  line: number;
  column: number;
  text: string;
  sha256: string;
}

type Params = Record<string, string | number | boolean | undefined>;

const searchRaw = (u: ApiUser, params: Params): Promise<ApiResponse> => {
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${q(String(v))}`)
    .join('&');
  return u.request('GET', `/v1/agent/files/search?${query}`);
};

async function search(u: ApiUser, params: Params): Promise<{ path: string; q: string; matches: Match[]; cursor: string | null; hasMore: boolean; filesSearched: number }> {
  const res = await searchRaw(u, params);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Every page, following cursors. */
async function searchAll(u: ApiUser, params: Params): Promise<{ matches: Match[]; pages: number }> {
  const matches: Match[] = [];
  let cursor = params.cursor as string | undefined;
  let pages = 0;
  for (;;) {
    const page = await search(u, { ...params, cursor });
    pages++;
    matches.push(...page.matches);
    expect(page.hasMore).toBe(page.cursor !== null);
    if (!page.hasMore) return { matches, pages };
    cursor = page.cursor!;
  }
}

/**
 * A user whose workspace holds only what the test writes: a new user's home project brings a
 * file (`/files/projects/Home/CONTEXT.md`), which goes for good here.
 */
async function emptyUser(): Promise<ApiUser> {
  const u = await stack.user();
  const res = await u.request('DELETE', `/v1/agent/files?path=${q('/files/projects')}&recursive=true&permanent=true`);
  expect([200, 404], res.text).toContain(res.status);
  return u;
}

const where = (m: Match[]) => m.map((x) => `${x.path}:${x.line}:${x.column}`);

const expectInvalid = async (res: Promise<ApiResponse>, field: string, code = 'INVALID_ARGUMENT') => {
  const r = await res;
  expect(r.status, r.text).toBe(400);
  expect(r.body.error).toMatchObject({ code, ...(code === 'INVALID_ARGUMENT' && { details: { field } }) });
};

describe('files search — matches', () => {
  it('search — ordered by path (byte order), line, column; every occurrence on a line; sha256 of the file', async () => {
    const u = await emptyUser();
    const files: Record<string, string> = {
      '/files/b.txt': 'foo foo\nnothing\nxfoo',
      '/files/a/z.txt': 'foo',
      '/files/a.txt': 'FOO',
      '/files/é.txt': 'foo',
      '/files/Z.txt': 'a foo',
      '/files/a-b.txt': 'foofoo',
    };
    for (const [path, content] of Object.entries(files)) await put(stack, u, path, content);
    const found = await search(u, { q: 'foo' });
    expect(found).toMatchObject({ path: '/files', q: 'foo', hasMore: false, cursor: null, filesSearched: 6 });
    expect(where(found.matches)).toEqual([
      '/files/Z.txt:1:3',
      '/files/a-b.txt:1:1',
      '/files/a-b.txt:1:4',
      '/files/a.txt:1:1',
      '/files/a/z.txt:1:1',
      '/files/b.txt:1:1',
      '/files/b.txt:1:5',
      '/files/b.txt:3:2',
      '/files/é.txt:1:1',
    ]);
    expect([...found.matches.map((m) => m.path)].sort(byteOrder)).toEqual(found.matches.map((m) => m.path));
    expect(found.matches[5]).toEqual({ path: '/files/b.txt', line: 1, column: 1, text: 'foo foo', sha256: sha256(files['/files/b.txt']!) });
  });

  it('search — columns count code points; text is the whole line cut to 500 characters (code points)', async () => {
    const u = await emptyUser();
    const long = `${'é'.repeat(300)}${'😀'.repeat(300)}needle`;
    await put(stack, u, '/files/u.txt', `héllo wörld needle\n😀😀needle needle\n${long}\nlast line needle`);
    const found = await search(u, { q: 'needle' });
    expect(found.matches.map((m) => [m.line, m.column])).toEqual([
      [1, 13],
      [2, 3],
      [2, 10],
      [3, 601],
      [4, 11],
    ]);
    expect(found.matches[0]!.text).toBe('héllo wörld needle');
    expect(found.matches[1]!.text).toBe('😀😀needle needle');
    expect(found.matches[2]!.text).toBe('😀😀needle needle');
    expect(found.matches[3]!.text).toBe(`${'é'.repeat(300)}${'😀'.repeat(200)}`);
    expect([...found.matches[3]!.text].length).toBe(500);
  });

  it('search — case-insensitive unless caseSensitive=true (Unicode folding: É, the Kelvin sign)', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/c.txt', 'Café\nCAFÉ\ncafé\n\u212Aelvin kelvin');
    expect((await search(u, { q: 'café' })).matches.map((m) => m.line)).toEqual([1, 2, 3]);
    expect((await search(u, { q: 'café', caseSensitive: true })).matches.map((m) => m.line)).toEqual([3]);
    expect((await search(u, { q: 'kelvin' })).matches.map((m) => m.column)).toEqual([1, 8]);
    expect((await search(u, { q: 'kelvin', caseSensitive: true })).matches.map((m) => m.column)).toEqual([8]);
    expect((await search(u, { q: 'c[a-z]f', regex: true, caseSensitive: true })).matches.map((m) => m.line)).toEqual([3]);
  });

  it('search — a literal is literal (regex characters mean themselves); regex=true takes RE2 syntax', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/r.txt', 'a.b\naxb\nx = a*b + 1\nfoo123bar\nend');
    expect((await search(u, { q: 'a.b' })).matches.map((m) => m.line)).toEqual([1]);
    expect((await search(u, { q: 'a.b', regex: true })).matches.map((m) => m.line)).toEqual([1, 2, 3]);
    expect((await search(u, { q: 'a*b' })).matches.map((m) => m.line)).toEqual([3]);
    expect((await search(u, { q: 'foo\\d+bar', regex: true })).matches).toMatchObject([{ line: 4, column: 1, text: 'foo123bar' }]);
    expect((await search(u, { q: '^end$', regex: true })).matches).toMatchObject([{ line: 5, column: 1 }]);
    expect((await search(u, { q: '(?i)FOO|^AXB', regex: true, caseSensitive: true })).matches.map((m) => m.line)).toEqual([2, 4]);
    // A match never spans lines.
    expect((await search(u, { q: 'b\\sa', regex: true })).matches).toEqual([]);
  });
});

describe('files search — scope', () => {
  it('search — glob: a name at any depth, `**` zero or more folders, relative to path', async () => {
    const u = await emptyUser();
    for (const p of ['/files/readme.md', '/files/docs/a.md', '/files/docs/deep/b.md', '/files/src/x.ts', '/files/src/lib/y.ts', '/files/src/lib/y.js', '/files/.hidden.md']) await put(stack, u, p, 'hit');
    const paths = async (params: Params) => (await search(u, { q: 'hit', ...params })).matches.map((m) => m.path);
    expect(await paths({ glob: '*.md' })).toEqual(['/files/.hidden.md', '/files/docs/a.md', '/files/docs/deep/b.md', '/files/readme.md']);
    expect(await paths({ glob: 'src/**/*.ts' })).toEqual(['/files/src/lib/y.ts', '/files/src/x.ts']);
    expect(await paths({ glob: 'docs/*.md' })).toEqual(['/files/docs/a.md']);
    expect(await paths({ glob: '**/*.md', path: '/files/docs' })).toEqual(['/files/docs/a.md', '/files/docs/deep/b.md']);
    expect(await paths({ glob: '*.md', path: '/files/docs' })).toEqual(['/files/docs/a.md', '/files/docs/deep/b.md']);
    expect(await paths({ glob: 'lib/*', path: '/files/src' })).toEqual(['/files/src/lib/y.js', '/files/src/lib/y.ts']);
    expect(await paths({ glob: '*.{js,ts}' })).toEqual(['/files/src/lib/y.js', '/files/src/lib/y.ts', '/files/src/x.ts']);
    expect((await search(u, { q: 'hit', glob: '*.md' })).filesSearched, 'only included files are searched').toBe(4);
  });

  it('search — only at or below path; a file path searches that file; a missing path → 404; a bad path → 400 INVALID_PATH', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/p/one.txt', 'word');
    await put(stack, u, '/files/p/sub/two.txt', 'word');
    await put(stack, u, '/files/px/three.txt', 'word');
    expect((await search(u, { q: 'word', path: '/files/p' })).matches.map((m) => m.path)).toEqual(['/files/p/one.txt', '/files/p/sub/two.txt']);
    expect((await search(u, { q: 'word', path: '/files/p/' })).path).toBe('/files/p');
    expect((await search(u, { q: 'word', path: '/files/p/sub/two.txt' })).matches.map((m) => m.path)).toEqual(['/files/p/sub/two.txt']);
    const missing = await searchRaw(u, { q: 'word', path: '/files/nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('FILE_NOT_FOUND');
    await expectInvalid(searchRaw(u, { q: 'word', path: '/filesx' }), 'path', 'INVALID_PATH');
    await expectInvalid(searchRaw(u, { q: 'word', path: '/files/../etc' }), 'path', 'INVALID_PATH');
    const empty = await emptyUser();
    expect(await search(empty, { q: 'word' })).toMatchObject({ path: '/files', matches: [], hasMore: false, cursor: null, filesSearched: 0 });
  });

  it('search — skips files that are not UTF-8, invalid UTF-8 and files over SEARCH_MAX_FILE_BYTES (1 MiB)', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/ok.txt', 'key');
    await put(stack, u, '/files/bin.dat', Buffer.concat([Buffer.from('key'), Buffer.from([0xff, 0xfe, 0x00])]));
    await put(stack, u, '/files/half.txt', Buffer.concat([Buffer.from('key '), Buffer.from([0xe2, 0x82])]));
    await put(stack, u, '/files/big.txt', `key${'x'.repeat(1024 * 1024 - 3)}\n`);
    await put(stack, u, '/files/limit.txt', `key${'x'.repeat(1024 * 1024 - 3)}`);
    for (let round = 0; round < 2; round++) {
      // The second round answers from the content summaries the first one left.
      const found = await search(u, { q: 'key' });
      expect(found.matches.map((m) => m.path), `round ${round}`).toEqual(['/files/limit.txt', '/files/ok.txt']);
      expect(found.filesSearched).toBe(2);
      expect(found.matches[0]!.text).toHaveLength(500);
    }
  });

  it("search — another user's files are never matched, whatever the path", async () => {
    const a = await emptyUser();
    const b = await emptyUser();
    await put(stack, a, '/files/secret.txt', 'the password is hunter2');
    await put(stack, b, '/files/mine.txt', 'nothing here');
    expect(await search(b, { q: 'hunter2' })).toMatchObject({ matches: [], filesSearched: 1 });
    expect((await searchRaw(b, { q: 'hunter2', path: '/files/secret.txt' })).status).toBe(404);
    expect((await search(a, { q: 'hunter2' })).matches).toHaveLength(1);
  });
});

describe('files search — paging', () => {
  it('search — limit and cursor page through every match once, in order; hasMore and cursor say when it ends', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/1.txt', 'x x x\nx');
    await put(stack, u, '/files/2.txt', 'no');
    await put(stack, u, '/files/3.txt', 'x\nx');
    const all = await search(u, { q: 'x' });
    expect(all.matches).toHaveLength(6);
    for (const limit of [1, 2, 3, 5, 6]) {
      const paged = await searchAll(u, { q: 'x', limit });
      expect(where(paged.matches), `limit ${limit}`).toEqual(where(all.matches));
      expect(paged.pages).toBe(Math.ceil(6 / limit));
    }
    const first = await search(u, { q: 'x', limit: 6 });
    expect(first).toMatchObject({ hasMore: false, cursor: null });
  });

  it('search — a cursor altered, made up, or issued for another search or user → 400 INVALID_ARGUMENT (cursor)', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/1.txt', 'y y y');
    const page = await search(u, { q: 'y', limit: 1 });
    const cursor = page.cursor!;
    await expectInvalid(searchRaw(u, { q: 'y', limit: 1, cursor: `${cursor}x` }), 'cursor');
    await expectInvalid(searchRaw(u, { q: 'y', limit: 1, cursor: 'bm90LWEtY3Vyc29y' }), 'cursor');
    await expectInvalid(searchRaw(u, { q: 'Y', limit: 1, cursor }), 'cursor');
    await expectInvalid(searchRaw(u, { q: 'y', regex: true, limit: 1, cursor }), 'cursor');
    await expectInvalid(searchRaw(u, { q: 'y', glob: '*.txt', limit: 1, cursor }), 'cursor');
    await expectInvalid(searchRaw(await emptyUser(), { q: 'y', limit: 1, cursor }), 'cursor');
    expect((await search(u, { q: 'y', limit: 5, cursor })).matches.map((m) => m.column)).toEqual([3, 5]);
  });

  it('search — a page resumes after the last match returned, also when files change in between', async () => {
    const u = await emptyUser();
    await put(stack, u, '/files/a.txt', 'k\nk');
    await put(stack, u, '/files/c.txt', 'k');
    const page = await search(u, { q: 'k', limit: 1 });
    await put(stack, u, '/files/b.txt', 'k');
    await put(stack, u, '/files/0.txt', 'k'); // before the position: not seen by this walk
    const rest = await searchAll(u, { q: 'k', cursor: page.cursor! });
    expect(where(rest.matches)).toEqual(['/files/a.txt:2:1', '/files/b.txt:1:1', '/files/c.txt:1:1']);
  });
});

describe('files search — input', () => {
  it('search — RE2 refusals (backreferences, look-around, bad syntax) → 400 INVALID_ARGUMENT on q', async () => {
    const u = await emptyUser();
    for (const pattern of ['(a)\\1', '(?=a)', '(?!a)', '(?<=a)b', '(?<!a)b', '[a-', '(', 'a**', 'x{1001}', '\\p{NoSuchClass}']) {
      await expectInvalid(searchRaw(u, { q: pattern, regex: true }), 'q');
    }
    expect((await searchRaw(u, { q: '(a)\\1' })).status, 'as a literal it is fine').toBe(200);
  });

  it('search — q is 1–1,000 characters (code points); limit is 1–1,000; booleans are true or false', async () => {
    const u = await emptyUser();
    await expectInvalid(searchRaw(u, {}), 'q');
    await expectInvalid(searchRaw(u, { q: '' }), 'q');
    await expectInvalid(searchRaw(u, { q: 'a'.repeat(1001) }), 'q');
    expect((await searchRaw(u, { q: 'a'.repeat(1000) })).status).toBe(200);
    expect((await searchRaw(u, { q: '😀'.repeat(1000) })).status, '1,000 code points, 2,000 UTF-16 units').toBe(200);
    await expectInvalid(searchRaw(u, { q: '😀'.repeat(1001) }), 'q');
    for (const limit of ['0', '1001', '-1', 'x', '1.5']) await expectInvalid(searchRaw(u, { q: 'a', limit }), 'limit');
    await expectInvalid(searchRaw(u, { q: 'a', regex: 'yes' }), 'regex');
    await expectInvalid(searchRaw(u, { q: 'a', caseSensitive: '1' }), 'caseSensitive');
    await expectInvalid(searchRaw(u, { q: 'a', unknown: 'x' }), 'unknown');
    expect((await u.request('GET', '/v1/agent/files/search?q=a', undefined, { authorization: '' })).status).toBe(401);
  });
});

describe('files search — read-your-writes', () => {
  it('search — sees each upload, overwrite, move, copy, delete and restore at once', async () => {
    const u = await emptyUser();
    const paths = async (text: string) => (await search(u, { q: text })).matches.map((m) => m.path);
    await put(stack, u, '/files/w.txt', 'alpha');
    expect(await paths('alpha')).toEqual(['/files/w.txt']);
    await put(stack, u, '/files/w.txt', 'beta');
    expect(await paths('alpha')).toEqual([]);
    expect(await paths('beta')).toEqual(['/files/w.txt']);
    await ok(move(u, '/files/w.txt', '/files/moved/w.txt'));
    expect(await paths('beta')).toEqual(['/files/moved/w.txt']);
    await ok(copy(u, '/files/moved/w.txt', '/files/copy.txt'));
    expect(await paths('beta')).toEqual(['/files/copy.txt', '/files/moved/w.txt']);
    expect((await u.request('DELETE', `/v1/agent/files?path=${q('/files/moved/w.txt')}`)).status).toBe(200);
    expect(await paths('beta')).toEqual(['/files/copy.txt']);
    const revisions = await u.request('GET', `/v1/agent/files/revisions?path=${q('/files/moved/w.txt')}`);
    const last = revisions.body.revisions.find((r: { deleted: boolean }) => !r.deleted).revision as string;
    expect((await u.request('POST', '/v1/agent/files/restore', { path: '/files/moved/w.txt', revision: last })).status).toBe(200);
    expect(await paths('beta')).toEqual(['/files/copy.txt', '/files/moved/w.txt']);
    // An earlier revision restored over the copy: its old text is found there at once.
    const copyRevs = await u.request('GET', `/v1/agent/files/revisions?path=${q('/files/w.txt')}`);
    const alpha = copyRevs.body.revisions.at(-1).revision as string;
    expect((await u.request('POST', '/v1/agent/files/restore', { path: '/files/copy.txt', revision: alpha })).status).toBe(404);
    expect((await u.request('POST', '/v1/agent/files/restore', { path: '/files/w.txt', revision: alpha })).status).toBe(200);
    expect(await paths('alpha')).toEqual(['/files/w.txt']);
  });
});

/** A brute-force scan: what the search must answer, computed here from the files' texts. */
function bruteForce(files: Map<string, string>, query: string, regex: boolean, caseSensitive: boolean): string[] {
  const source = regex ? query : query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(source, `gu${caseSensitive ? '' : 'i'}`);
  const out: string[] = [];
  for (const path of [...files.keys()].sort(byteOrder)) {
    files
      .get(path)!
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(re)) out.push(`${path}:${i + 1}:${[...line.slice(0, m.index)].length + 1}`);
      });
  }
  return out;
}

describe('files search — property', () => {
  it('search — equals a brute-force scan after random writes, edits and moves, for random literal and regex queries', async () => {
    const u = await emptyUser();
    const files = new Map<string, string>();
    const alphabet = ['a', 'b', 'c', 'A', 'B', 'é', 'É', '😀', ' ', '\n', 'x', 'y'];
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 60 }).map((cs) => cs.join(''));
    const name = fc.constantFrom('/files/a.txt', '/files/b.md', '/files/d/c.txt', '/files/d/e/f.txt', '/files/é.txt', '/files/Z.txt');
    const op = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), path: name, text }),
      fc.record({ kind: fc.constant('move' as const), path: name, to: name }),
      fc.record({ kind: fc.constant('delete' as const), path: name }),
    );
    const literal = fc.array(fc.constantFrom('a', 'b', 'c', 'A', 'é', 'É', '😀', ' ', 'x'), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''));
    const pattern = fc.constantFrom('ab+', '[ab]c', '^a', 'b$', 'a.c', '(ab|ba)c', 'x*y', '\\bab', 'é+', '😀.', 'a{2}', '[^ ]x');
    const query = fc.oneof(
      fc.record({ q: literal, regex: fc.constant(false), caseSensitive: fc.boolean() }),
      fc.record({ q: pattern, regex: fc.constant(true), caseSensitive: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 4 }), fc.array(query, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 7 }), async (ops, queries, limit) => {
        for (const o of ops) {
          if (o.kind === 'write') {
            if ([...files.keys()].some((p) => o.path.startsWith(`${p}/`) || p.startsWith(`${o.path}/`))) continue;
            await put(stack, u, o.path, o.text);
            files.set(o.path, o.text);
          } else if (o.kind === 'move') {
            if (!files.has(o.path) || files.has(o.to) || o.to === o.path) continue;
            await ok(move(u, o.path, o.to));
            files.set(o.to, files.get(o.path)!);
            files.delete(o.path);
          } else if (files.has(o.path)) {
            expect((await u.request('DELETE', `/v1/agent/files?path=${q(o.path)}`)).status).toBe(200);
            files.delete(o.path);
          }
        }
        for (const one of queries) {
          const expected = bruteForce(files, one.q, one.regex, one.caseSensitive);
          const got = await searchAll(u, { q: one.q, regex: one.regex, caseSensitive: one.caseSensitive, limit });
          expect(where(got.matches), JSON.stringify(one)).toEqual(expected);
        }
      }),
      { numRuns: 25, seed: 20_261_126 },
    );
  });
});
