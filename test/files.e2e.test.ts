import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { q, upload, uploadParts } from './support/files.js';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

const put = async (u: ApiUser, path: string, content: string | Uint8Array = 'x') => {
  const res = await upload(stack.url, u, { filename: 'ignored', content }, { path, onConflict: 'overwrite' });
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const list = (u: ApiUser, query = '') => u.request('GET', `/v1/agent/files${query}`);
const read = (u: ApiUser, path: string) => u.request('GET', `/v1/agent/files/read?path=${q(path)}`);

describe('files — paths', () => {
  const INVALID = [
    '', 'files', 'files/a', '/filesx', '/Files', '/files//', '/files//a', '/files/a//b', '/files/.', '/files/./a', '/files/..', '/files/a/../b',
    '/files/a\\b', '/files/\u0000', '/files/a\u0001b', '/files/tab\there', '/files/new\nline', '/files/\u007f', '/files/\u0085',
    `/files/${'a'.repeat(256)}`, `/files/${'é'.repeat(128)}`,
  ];

  it('paths — every route rejects a path that breaks the rules with 400 INVALID_PATH', async () => {
    const u = await stack.user();
    for (const path of INVALID) {
      for (const [method, route] of [['GET', '/v1/agent/files'], ['GET', '/v1/agent/files/read'], ['GET', '/v1/agent/files/download'], ['DELETE', '/v1/agent/files']] as const) {
        const res = await u.request(method, `${route}?path=${q(path)}`);
        expect(res.status, `${method} ${route} ${JSON.stringify(path)}`).toBe(400);
        expect(res.body.error.code).toBe('INVALID_PATH');
      }
      const up = await upload(stack.url, u, { filename: 'f.txt', content: 'x' }, { path });
      expect(up.body?.error?.code, `upload to ${JSON.stringify(path)}`).toBe('INVALID_PATH');
    }
  });

  it('paths — a segment of 255 bytes and a path of 900 bytes are fine; 901 bytes is not', async () => {
    const u = await stack.user();
    // s3rver keeps objects as files named <last segment> plus a suffix, so its own 255-byte
    // file name limit would trip on a 255-byte last segment; a directory segment shows the rule.
    const seg255 = 'd'.repeat(255);
    expect((await put(u, `/files/${seg255}/f.txt`, 'ok')).path).toBe(`/files/${seg255}/f.txt`);
    const deep = (total: number) => {
      const parts: string[] = [];
      let left = total - '/files'.length;
      while (left > 0) {
        const n = Math.min(100, left - 1);
        parts.push('p'.repeat(n));
        left -= n + 1;
      }
      return `/files/${parts.join('/')}`;
    };
    expect(Buffer.byteLength(deep(900))).toBe(900);
    expect((await put(u, deep(900), 'deep')).path).toBe(deep(900));
    expect((await read(u, deep(900))).body.content).toBe('deep');
    expect((await read(u, deep(901))).body.error.code).toBe('INVALID_PATH');
  });

  it('paths — a trailing slash is dropped, names are case-sensitive, query strings are decoded once', async () => {
    const u = await stack.user();
    await put(u, '/files/Dir/A.txt', 'upper');
    expect((await list(u, `?path=${q('/files/Dir/')}`)).body.path).toBe('/files/Dir');
    expect((await read(u, '/files/Dir/a.txt')).status).toBe(404);
    expect((await read(u, '/files/dir/A.txt')).status).toBe(404);
    await put(u, '/files/a%20b.txt', 'percent');
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/a%2520b.txt')).body).toMatchObject({ path: '/files/a%20b.txt', content: 'percent' });
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/a%20b.txt')).status).toBe(404);
  });
});

describe('files — list', () => {
  it('list — defaults: /files, not recursive, with stats; sorted by path in byte order', async () => {
    const u = await stack.user();
    for (const p of ['/files/b.md', '/files/a/x.txt', '/files/a b.txt', '/files/Z.bin', '/files/é.txt', '/files/\uff5e.txt', '/files/😀.txt']) await put(u, p, 'data');
    const res = await list(u);
    expect(res.status).toBe(200);
    expect(res.body.path).toBe('/files');
    expect(res.body.recursive).toBe(false);
    const paths = res.body.entries.map((e: { path: string }) => e.path);
    expect(paths).toEqual(['/files/Z.bin', '/files/a', '/files/a b.txt', '/files/b.md', '/files/projects', '/files/é.txt', '/files/\uff5e.txt', '/files/😀.txt']);
    const file = res.body.entries.find((e: { path: string }) => e.path === '/files/b.md');
    expect(file).toEqual({ path: '/files/b.md', name: 'b.md', type: 'file', size: 4, modifiedAt: expect.stringMatching(ISO_MS), mimeType: 'text/markdown', sha256: createHash('sha256').update('data').digest('hex') });
    expect(res.body.entries.find((e: { path: string }) => e.path === '/files/a')).toEqual({ path: '/files/a', name: 'a', type: 'directory' });
    expect(res.body.entries.find((e: { path: string }) => e.path === '/files/Z.bin').mimeType).toBe('application/octet-stream');
  });

  it('list — recursive lists every descendant, directories included; includeStats=false keeps path, name, type', async () => {
    const u = await stack.user();
    await put(u, '/files/r/one/two/deep.txt');
    await put(u, '/files/r/top.txt');
    const res = await list(u, '?path=/files/r&recursive=true&includeStats=false');
    expect(res.body).toEqual({
      path: '/files/r',
      recursive: true,
      entries: [
        { path: '/files/r/one', name: 'one', type: 'directory' },
        { path: '/files/r/one/two', name: 'two', type: 'directory' },
        { path: '/files/r/one/two/deep.txt', name: 'deep.txt', type: 'file' },
        { path: '/files/r/top.txt', name: 'top.txt', type: 'file' },
      ],
    });
  });

  it('list — a file lists as its one entry; an absent path is 404; /files always exists', async () => {
    const u = await stack.user();
    await put(u, '/files/only.txt', 'abc');
    const one = await list(u, '?path=/files/only.txt');
    expect(one.body.entries).toEqual([expect.objectContaining({ path: '/files/only.txt', type: 'file', size: 3 })]);
    const missing = await list(u, '?path=/files/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('FILE_NOT_FOUND');
    await u.request('DELETE', '/v1/agent/files?path=/files&recursive=true');
    const root = await list(u, '?path=/files&recursive=true');
    expect(root.status).toBe(200);
  });

  it('list — bad booleans and unknown parameters are 400 INVALID_ARGUMENT with details.field', async () => {
    const u = await stack.user();
    expect((await list(u, '?recursive=yes')).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'recursive' } });
    expect((await list(u, '?includeStats=1')).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'includeStats' } });
    expect((await list(u, '?pth=/files')).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'pth' } });
  });
});

describe('files — read', () => {
  it('read — UTF-8 text comes back whole; the 10 MiB limit is inclusive', async () => {
    const u = await stack.user();
    await put(u, '/files/t.md', '# Héllo 🚀\n');
    expect((await read(u, '/files/t.md')).body).toEqual({ path: '/files/t.md', content: '# Héllo 🚀\n', encoding: 'utf-8' });
    const limit = 10 * 1024 * 1024;
    await put(u, '/files/limit.txt', Buffer.alloc(limit, 'a'));
    const atLimit = await read(u, '/files/limit.txt');
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.content.length).toBe(limit);
    await put(u, '/files/over.txt', Buffer.alloc(limit + 1, 'a'));
    const over = await read(u, '/files/over.txt');
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('FILE_TOO_LARGE');
  });

  it('read — bytes that are not UTF-8 are 422; directories (the root too) 400; absent files 404', async () => {
    const u = await stack.user();
    await put(u, '/files/bin.dat', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff]));
    await put(u, '/files/d/x.txt');
    expect((await read(u, '/files/bin.dat')).body.error.code).toBe('FILE_NOT_TEXT');
    expect((await read(u, '/files/bin.dat')).status).toBe(422);
    for (const dir of ['/files/d', '/files', '/files/']) {
      const res = await read(u, dir);
      expect(res.status, dir).toBe(400);
      expect(res.body.error.code).toBe('IS_A_DIRECTORY');
    }
    expect((await read(u, '/files/none.txt')).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await u.request('GET', '/v1/agent/files/read')).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'path' } });
  });
});

describe('files — delete', () => {
  it('delete — a file; a directory only with recursive=true; never the root', async () => {
    const u = await stack.user();
    await put(u, '/files/d/a.txt');
    await put(u, '/files/d/sub/b.txt');
    await put(u, '/files/d/sub/c.txt');
    await put(u, '/files/keep.txt');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/d/a.txt')).body).toEqual({ success: true, path: '/files/d/a.txt' });
    const notEmpty = await u.request('DELETE', '/v1/agent/files?path=/files/d');
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.error.code).toBe('DIRECTORY_NOT_EMPTY');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/d&recursive=false')).status).toBe(409);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/d/&recursive=true')).body).toEqual({ success: true, path: '/files/d' });
    expect((await list(u, '?path=/files/d')).status).toBe(404);
    expect((await read(u, '/files/keep.txt')).status).toBe(200);
    for (const root of ['/files', '/files/']) {
      const res = await u.request('DELETE', `/v1/agent/files?path=${q(root)}&recursive=true`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_PATH');
    }
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/gone')).body.error.code).toBe('FILE_NOT_FOUND');
  });
});

describe('files — isolation', () => {
  it('isolation — no request of one user reaches another user\'s files', async () => {
    const a = await stack.user();
    const b = await stack.user();
    await put(a, '/files/secret/plan.md', 'only a');
    expect((await read(b, '/files/secret/plan.md')).status).toBe(404);
    expect((await list(b, '?path=/files/secret')).status).toBe(404);
    expect((await b.request('GET', '/v1/agent/files/download?path=/files/secret/plan.md')).status).toBe(404);
    expect((await b.request('DELETE', '/v1/agent/files?path=/files/secret&recursive=true')).status).toBe(404);
    expect((await list(b, '?recursive=true')).body.entries.map((e: { path: string }) => e.path)).not.toContain('/files/secret');
    await put(b, '/files/secret/plan.md', 'only b');
    expect((await read(a, '/files/secret/plan.md')).body.content).toBe('only a');
    expect((await read(b, '/files/secret/plan.md')).body.content).toBe('only b');
    const sneaky = await stack.user();
    for (const path of ['/files/../secret/plan.md', `/files/${a.sub}/secret/plan.md`, '/files/%2e%2e/secret/plan.md']) {
      expect([400, 404]).toContain((await read(sneaky, path)).status);
    }
  });
});

describe('files — upload form', () => {
  it('upload — needs multipart/form-data (415), one file part, fields before it', async () => {
    const u = await stack.user();
    const json = await u.request('POST', '/v1/agent/files/upload', { path: '/files/x' });
    expect(json.status).toBe(415);
    expect(json.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const file = { name: 'file', filename: 'f.txt', content: Buffer.from('x') };
    const cases: [string, Parameters<typeof uploadParts>[2], string][] = [
      ['path after file', [file, { name: 'path', value: '/files/x.txt' }], 'path'],
      ['onConflict after file', [file, { name: 'onConflict', value: 'overwrite' }], 'onConflict'],
      ['second file', [file, { ...file, filename: 'g.txt' }], 'file'],
      ['no file', [{ name: 'path', value: '/files/x.txt' }], 'file'],
      ['unknown onConflict', [{ name: 'onConflict', value: 'replace' }, file], 'onConflict'],
      ['unknown field', [{ name: 'colour', value: 'red' }, file], 'colour'],
      ['path twice', [{ name: 'path', value: '/files/a' }, { name: 'path', value: '/files/b' }, file], 'path'],
    ];
    for (const [what, parts, field] of cases) {
      const res = await uploadParts(stack.url, u, parts);
      expect(res.status, what).toBe(400);
      expect(res.body.error, what).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    expect((await uploadParts(stack.url, u, [file], { query: '?onConflict=replace' })).body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'onConflict' } });
    expect((await uploadParts(stack.url, u, [{ name: 'path', value: '/files/a.txt' }, file], { query: '?path=/files/b.txt' })).body.error.details.field).toBe('path');
    expect((await list(u, '?recursive=true')).body.entries.filter((e: { path: string }) => !e.path.startsWith('/files/projects'))).toEqual([]);
  });

  it('upload — destination: no path, a trailing slash, an existing directory, a full path; query parameters work too', async () => {
    const u = await stack.user();
    const up = (fields: { path?: string }, filename = 'notes.md') => upload(stack.url, u, { filename, content: 'n' }, fields);
    expect((await up({})).body).toEqual({ success: true, path: '/files/notes.md', size: 1, mimeType: 'text/markdown', sha256: createHash('sha256').update('n').digest('hex') });
    expect((await up({ path: '/files/new/' })).body.path).toBe('/files/new/notes.md');
    expect((await up({ path: '/files/new' }, 'other.txt')).body.path).toBe('/files/new/other.txt');
    expect((await up({ path: '/files/new/renamed.json' })).body).toMatchObject({ path: '/files/new/renamed.json', mimeType: 'application/json' });
    expect((await up({ path: '/files/' }, 'rooted.txt')).body.path).toBe('/files/rooted.txt');
    const viaQuery = await uploadParts(stack.url, u, [{ name: 'file', filename: 'q.txt', content: Buffer.from('q') }], { query: `?path=${q('/files/by-query/')}&onConflict=uuid` });
    expect(viaQuery.body.path).toBe('/files/by-query/q.txt');
  });

  it('upload — file names in the part header are UTF-8, and name the file', async () => {
    const u = await stack.user();
    const res = await upload(stack.url, u, { filename: '研究 🚀 notes.md', content: 'u' });
    expect(res.body.path).toBe('/files/研究 🚀 notes.md');
    expect((await read(u, '/files/研究 🚀 notes.md')).body.content).toBe('u');
    expect((await upload(stack.url, u, { filename: 'data.unknownext', content: 'u' })).body.mimeType).toBe('application/octet-stream');
  });

  it('upload — onConflict: error → 409 FILE_EXISTS, overwrite replaces, uuid renames; no conflict keeps the name', async () => {
    const u = await stack.user();
    const up = (filename: string, content: string, onConflict?: string) => upload(stack.url, u, { filename, content }, { path: '/files/c/', ...(onConflict && { onConflict }) });
    await up('notes.md', 'one');
    const dup = await up('notes.md', 'two');
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'FILE_EXISTS', details: { path: '/files/c/notes.md' } });
    expect((await up('notes.md', 'two', 'error')).status).toBe(409);
    expect((await up('notes.md', 'three', 'overwrite')).body).toMatchObject({ path: '/files/c/notes.md', size: 5 });
    expect((await read(u, '/files/c/notes.md')).body.content).toBe('three');
    const renamed = await up('notes.md', 'four', 'uuid');
    expect(renamed.body.path).toMatch(new RegExp(`^/files/c/notes-${UUID}\\.md$`));
    expect(renamed.body.mimeType).toBe('text/markdown');
    expect((await read(u, renamed.body.path)).body.content).toBe('four');
    await up('Makefile', 'm');
    expect((await up('Makefile', 'm2', 'uuid')).body.path).toMatch(new RegExp(`^/files/c/Makefile-${UUID}$`));
    await up('.env', 'e');
    expect((await up('.env', 'e2', 'uuid')).body.path).toMatch(new RegExp(`^/files/c/\\.env-${UUID}$`));
    for (const mode of ['uuid', 'overwrite', 'error']) expect((await up(`fresh-${mode}.txt`, 'f', mode)).body.path).toBe(`/files/c/fresh-${mode}.txt`);
  });

  it('upload — PATH_CONFLICT: never under a file, never replacing a directory', async () => {
    const u = await stack.user();
    await put(u, '/files/plain', 'file');
    const under = await upload(stack.url, u, { filename: 'x.txt', content: 'x' }, { path: '/files/plain/x.txt' });
    expect(under.status).toBe(409);
    expect(under.body.error.code).toBe('PATH_CONFLICT');
    const deeper = await upload(stack.url, u, { filename: 'x.txt', content: 'x' }, { path: '/files/plain/' });
    expect(deeper.body.error.code).toBe('PATH_CONFLICT');
    await put(u, '/files/folder/inside.txt');
    for (const onConflict of ['error', 'overwrite']) {
      const replace = await upload(stack.url, u, { filename: 'folder', content: 'x' }, { onConflict });
      expect(replace.status, onConflict).toBe(409);
      expect(replace.body.error.code).toBe('PATH_CONFLICT');
    }
    expect((await list(u, '?path=/files/folder')).body.entries.map((e: { path: string }) => e.path)).toEqual(['/files/folder/inside.txt']);
  });

  it('upload — an empty file is a file of size 0', async () => {
    const u = await stack.user();
    expect((await upload(stack.url, u, { filename: 'empty.txt', content: '' })).body).toMatchObject({ path: '/files/empty.txt', size: 0 });
    expect((await read(u, '/files/empty.txt')).body.content).toBe('');
  });
});
