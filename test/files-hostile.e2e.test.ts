import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { byteOrder, download, jsonOf, list, multipartBytes, newBoundary, put, rawUpload, read, sha256, stat, statusOf, type Entry } from './support/files-api.js';
import { request, startStack, type ApiUser, type Stack } from './support/stack.js';

const IDLE_MS = 1500;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ gatewayEnv: { UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_MS) } });
});
afterAll(async () => {
  await stack?.stop();
});

const MiB = 1024 * 1024;
const mine = (entries: Entry[]) => entries.map((e) => e.path).filter((p) => p !== '/files/projects' && !p.startsWith('/files/projects/'));
const readyz = async () => (await request(`${stack.url}/readyz`, {})).status;

/**
 * Waits until the files service has seen the end of the upload of request `requestId`: an
 * AbortUpload call, or an upload call that failed. Only then is "nothing was stored" a result.
 */
async function uploadGivenUp(requestId: string): Promise<void> {
  const gaveUp = () =>
    stack
      .logsOf('files')
      .filter((l) => l.requestId === requestId && typeof l.method === 'string')
      .some((l) => String(l.method).endsWith('/AbortUpload') || (/Upload/.test(String(l.method)) && l.code !== undefined && l.code !== 'OK'));
  await expect.poll(gaveUp, { timeout: 20_000, interval: 50, message: `the files service never heard that upload ${requestId} ended` }).toBe(true);
}

/** Checks that `path` holds `content` whole: by the listing's sha256, by read and by download. */
async function holds(u: ApiUser, path: string, content: string): Promise<void> {
  expect(await stat(u, path), path).toMatchObject({ size: Buffer.byteLength(content), sha256: sha256(content) });
  expect((await read(u, path)).body.content, path).toBe(content);
  const got = await download(stack.url, u, path);
  expect(got.status).toBe(200);
  expect(got.sha256, `downloaded ${path}`).toBe(sha256(content));
  expect(got.headers.get('etag')).toBe(`"${sha256(content)}"`);
}

function uploadBody(path: string, content: Uint8Array, onConflict?: string) {
  const boundary = newBoundary();
  const parts = [{ name: 'path', value: path }, ...(onConflict ? [{ name: 'onConflict', value: onConflict }] : []), { name: 'file', filename: 'upload.bin', content }];
  return { boundary, parts, whole: multipartBytes(boundary, parts), unclosed: multipartBytes(boundary, parts, { closing: false }) };
}

const rid = (what: string) => `hostile-${what}-${randomBytes(6).toString('hex')}`;

describe('files — clients that misbehave', () => {
  it('hostile — a socket destroyed mid-body stores nothing: an overwrite keeps the old content whole, a new path stays absent', async () => {
    const u = await stack.user();
    const original = 'the original content, line after line\n'.repeat(2000);
    await put(stack, u, '/files/keep.txt', original);
    for (const [path, onConflict] of [['/files/keep.txt', 'overwrite'], ['/files/new.bin', undefined]] as const) {
      const { boundary, whole } = uploadBody(path, randomBytes(12 * MiB), onConflict);
      const requestId = rid('destroyed');
      const raw = await rawUpload(stack.url, u, { boundary, contentLength: whole.length, requestId });
      for (let off = 0; off < whole.length / 2; off += 256 * 1024) await raw.write(whole.subarray(off, off + 256 * 1024));
      await holds(u, '/files/keep.txt', original); // during the upload too
      raw.socket.destroy();
      await raw.closed;
      await uploadGivenUp(requestId);
      await holds(u, '/files/keep.txt', original);
      expect(await stat(u, '/files/new.bin')).toBeUndefined();
      expect(mine(await list(u, '/files', { recursive: true })), `after a destroyed upload to ${path}`).toEqual(['/files/keep.txt']);
    }
  });

  it('hostile — a body that ends without the closing delimiter is 400 INVALID_ARGUMENT and stores nothing', async () => {
    const u = await stack.user();
    const original = 'still the original\n';
    await put(stack, u, '/files/keep.txt', original);
    const cases: [string, string | undefined, (b: ReturnType<typeof uploadBody>) => Buffer][] = [
      ['/files/keep.txt', 'overwrite', (b) => b.unclosed],
      ['/files/fresh.txt', undefined, (b) => b.unclosed],
      // The file part cut inside its content: not even the part's own line break.
      ['/files/keep.txt', 'overwrite', (b) => b.whole.subarray(0, b.whole.length - 4096)],
    ];
    for (const [path, onConflict, cut] of cases) {
      const b = uploadBody(path, Buffer.alloc(256 * 1024, 'n'), onConflict);
      const body = cut(b);
      // Content-Length announces exactly what is sent: the request ends, the connection stays open.
      const raw = await rawUpload(stack.url, u, { boundary: b.boundary, contentLength: body.length, requestId: rid('unclosed') });
      await raw.write(body);
      const { response } = await raw.closed;
      expect(statusOf(response), `${path}: ${response.slice(0, 300)}`).toBe(400);
      expect(jsonOf(response)?.error?.code).toBe('INVALID_ARGUMENT');
      // The same with a chunked body, as fetch sends a stream.
      const chunked = await request(`${stack.url}/v1/agent/files/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': `multipart/form-data; boundary=${b.boundary}` },
        body: ReadableStream.from([new Uint8Array(body)]),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status, chunked.text).toBe(400);
      expect(chunked.body.error.code).toBe('INVALID_ARGUMENT');
    }
    await holds(u, '/files/keep.txt', original);
    expect(mine(await list(u, '/files', { recursive: true }))).toEqual(['/files/keep.txt']);
  });

  it('hostile — a body that stalls past UPLOAD_IDLE_TIMEOUT_MS stores nothing; the old content stays readable during and after', async () => {
    const u = await stack.user();
    const original = 'before the stall\n'.repeat(100);
    await put(stack, u, '/files/keep.txt', original);
    for (const [path, onConflict] of [['/files/keep.txt', 'overwrite'], ['/files/stalled.bin', undefined]] as const) {
      const { boundary, whole } = uploadBody(path, randomBytes(4 * MiB), onConflict);
      const requestId = rid('stalled');
      const raw = await rawUpload(stack.url, u, { boundary, contentLength: whole.length, requestId });
      await raw.write(whole.subarray(0, whole.length / 2));
      const lastByte = Date.now();
      let closedAt = 0;
      void raw.closed.then(({ at }) => (closedAt = at));
      // Throughout the stall, reads see the old content, whole.
      let reads = 0;
      while (closedAt === 0 && Date.now() - lastByte < 15_000) {
        expect((await read(u, '/files/keep.txt')).body.content).toBe(original);
        reads++;
      }
      const { response } = await raw.closed;
      raw.socket.destroy();
      expect(closedAt - lastByte, 'the gateway gave up on the stalled body').toBeLessThan(15_000);
      expect(closedAt - lastByte, 'but not before the idle timeout').toBeGreaterThanOrEqual(IDLE_MS - 300);
      if (response) expect(statusOf(response), response.slice(0, 300)).toBeGreaterThanOrEqual(400);
      expect(reads).toBeGreaterThan(0);
      await uploadGivenUp(requestId);
      await holds(u, '/files/keep.txt', original);
      expect(await stat(u, '/files/stalled.bin')).toBeUndefined();
    }
    expect(mine(await list(u, '/files', { recursive: true }))).toEqual(['/files/keep.txt']);
    // A slow client that keeps sending (each pause shorter than the timeout) is no stalled one.
    const slow = uploadBody('/files/slow.txt', Buffer.from('slow but steady'));
    const raw = await rawUpload(stack.url, u, { boundary: slow.boundary, contentLength: slow.whole.length, requestId: rid('slow') });
    const step = Math.ceil(slow.whole.length / 4);
    for (let off = 0; off < slow.whole.length; off += step) {
      await raw.write(slow.whole.subarray(off, off + step));
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS / 3)); // the pace is the behaviour under test
    }
    expect(statusOf((await raw.closed).response)).toBe(200);
    await holds(u, '/files/slow.txt', 'slow but steady');
  });

  it('hostile — a last segment of 255 UTF-8 bytes: upload, list, read, download, delete; /readyz stays 200', async () => {
    const u = await stack.user();
    const name = `${'é'.repeat(127)}a`;
    expect(Buffer.byteLength(name)).toBe(255);
    const content = 'a long name\n';
    expect((await readyz())).toBe(200);
    const byPath = await upload(stack.url, u, { filename: 'x', content }, { path: `/files/long/${name}` });
    expect(byPath.body, byPath.text).toEqual({ success: true, path: `/files/long/${name}`, size: Buffer.byteLength(content), mimeType: 'application/octet-stream', sha256: sha256(content) });
    const byFilename = await upload(stack.url, u, { filename: `${'é'.repeat(125)}a.md`, content: '# md' });
    expect(byFilename.body.path).toBe(`/files/${'é'.repeat(125)}a.md`);
    const dirName = 'д'.repeat(127) + 'b';
    await put(stack, u, `/files/${dirName}/${name}`, 'both long');
    expect(await readyz()).toBe(200);
    expect(await list(u, '/files/long')).toEqual([expect.objectContaining({ path: `/files/long/${name}`, name, type: 'file', sha256: sha256(content) })]);
    expect(mine(await list(u, '/files', { recursive: true }))).toEqual(
      [`/files/${dirName}`, `/files/${dirName}/${name}`, '/files/long', `/files/long/${name}`, `/files/${'é'.repeat(125)}a.md`].sort(byteOrder),
    );
    expect((await read(u, `/files/long/${name}`)).body).toEqual({ path: `/files/long/${name}`, content, encoding: 'utf-8' });
    expect((await read(u, `/files/${dirName}/${name}`)).body.content).toBe('both long');
    const got = await download(stack.url, u, `/files/long/${name}`);
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe(content);
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="${'_'.repeat(127)}a"; filename*=UTF-8''${encodeURIComponent(name)}`);
    expect(await readyz()).toBe(200);
    for (const p of [`/files/long/${name}`, `/files/${dirName}`, `/files/${'é'.repeat(125)}a.md`]) {
      const del = await u.request('DELETE', `/v1/agent/files?path=${q(p)}&recursive=true`);
      expect(del.status, del.text).toBe(200);
    }
    expect(mine(await list(u, '/files', { recursive: true }))).toEqual([]);
    expect(await readyz()).toBe(200);
  });

  it('hostile — names the embedded store uses for its own files (w._S3rver_object …) are names like any other', async () => {
    const u = await stack.user();
    const files: Record<string, string> = {
      '/files/s3/w': 'plain w',
      '/files/s3/w._S3rver_object': 'looks like the store\'s object file',
      '/files/s3/w._S3rver_metadata.json': '{"looks":"like its metadata"}',
      '/files/s3/w._S3rver_object.md5': 'and its checksum',
      '/files/s3b/w': 'w beside a directory',
      '/files/s3b/w._S3rver_object/z.txt': 'inside a directory named like an object file',
    };
    for (const [path, content] of Object.entries(files)) await put(stack, u, path, content);
    expect(await readyz()).toBe(200);
    for (const [path, content] of Object.entries(files)) await holds(u, path, content);
    const listed = await list(u, '/files/s3b', { recursive: true });
    expect(listed.map((e) => [e.path, e.type])).toEqual([
      ['/files/s3b/w', 'file'],
      ['/files/s3b/w._S3rver_object', 'directory'],
      ['/files/s3b/w._S3rver_object/z.txt', 'file'],
    ]);
    const direct = Object.entries(files).filter(([p]) => p.startsWith('/files/s3/'));
    direct.sort(([a], [b]) => byteOrder(a, b));
    expect((await list(u, '/files/s3')).map((e) => [e.name, e.sha256])).toEqual(direct.map(([p, c]) => [p.slice('/files/s3/'.length), sha256(c)]));
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/s3/w')).status).toBe(200);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/s3b/w')).status).toBe(200);
    for (const [path, content] of Object.entries(files).filter(([p]) => !p.endsWith('/w'))) await holds(u, path, content);
    expect(await stat(u, '/files/s3/w')).toBeUndefined();
    expect(await readyz()).toBe(200);
  });

  it('hostile — a path of 900 bytes ending in a 255-byte segment works everywhere', async () => {
    const u = await stack.user();
    const last = `${'ü'.repeat(126)}end`;
    const build = (total: number, tail: string) => {
      const parts: string[] = [];
      let left = total - '/files'.length - 1 - Buffer.byteLength(tail);
      while (left > 0) {
        const n = left <= 201 ? left - 1 : 200;
        parts.push('q'.repeat(n));
        left -= n + 1;
      }
      return `/files/${[...parts, tail].join('/')}`;
    };
    const path = build(900, last);
    const other = build(900, `${'ö'.repeat(126)}end`);
    expect([Buffer.byteLength(path), Buffer.byteLength(other), Buffer.byteLength(last)]).toEqual([900, 900, 255]);
    const up = await upload(stack.url, u, { filename: 'x', content: 'deep and long' }, { path });
    expect(up.status, up.text).toBe(200);
    expect(up.body.path).toBe(path);
    await holds(u, path, 'deep and long');
    expect(mine(await list(u, '/files', { recursive: true })).at(-1)).toBe(path);
    const moved = await u.request('POST', '/v1/agent/files/move', { from: path, to: other });
    expect(moved.status, moved.text).toBe(200);
    await holds(u, other, 'deep and long');
    expect((await u.request('DELETE', `/v1/agent/files?path=${q(other)}`)).status).toBe(200);
    expect(await stat(u, other)).toBeUndefined();
    expect(await readyz()).toBe(200);
  });
});
