import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { sha256 } from './support/files-api.js';
import { readWithJava } from './support/java-zip.js';
import { request, startStack, type ApiUser, type Stack } from './support/stack.js';

const ALLOWED = 'https://app.example.test';
const OTHER = 'https://evil.example.test';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ gatewayEnv: { CORS_ORIGINS: ` ${ALLOWED} , http://localhost:1` } });
});
afterAll(async () => {
  await stack?.stop();
});

/** A multipart body exactly as a browser writes it for `filename` (WHATWG: `"` → %22, CR → %0D, LF → %0A). */
function browserForm(filename: string, content: Buffer): { contentType: string; body: Buffer } {
  const boundary = `----WebKitFormBoundary${randomBytes(8).toString('hex')}`;
  const encoded = filename.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${encoded}"\r\nContent-Type: application/pdf\r\n\r\n`;
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([Buffer.from(head, 'utf8'), content, Buffer.from(`\r\n--${boundary}--\r\n`)]) };
}

function postForm(u: ApiUser, form: { contentType: string; body: Buffer }) {
  return request(`${stack.url}/v1/agent/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'content-type': form.contentType }, body: form.body });
}

describe('clients — multipart file names as browsers encode them (WHATWG)', () => {
  it('upload — résumé "final".pdf is stored under its own name, not with %22', async () => {
    const u = await stack.user();
    const res = await postForm(u, browserForm('résumé "final".pdf', Buffer.from('%PDF-1.7')));
    expect(res.status).toBe(200);
    expect(res.body.path).toBe('/files/résumé "final".pdf');
    const listed = await u.request('GET', `/v1/agent/files?path=${q('/files/résumé "final".pdf')}`);
    expect(listed.body.entries.map((e: { name: string }) => e.name)).toEqual(['résumé "final".pdf']);
  });

  it('upload — other percent sequences stay as they are; an encoded line break is a control character (400)', async () => {
    const u = await stack.user();
    const kept = await postForm(u, browserForm('100%25 %41.txt', Buffer.from('x')));
    expect(kept.body.path).toBe('/files/100%25 %41.txt');
    const broken = await postForm(u, browserForm('a\nb.txt', Buffer.from('x')));
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('INVALID_PATH');
  });
});

describe('clients — export ZIPs open in every streaming reader', () => {
  it("export — incompressible entries read cleanly through Java's ZipInputStream, bytes intact", async () => {
    const u = await stack.user();
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Media' })).status).toBe(201);
    const files: Record<string, Buffer> = {
      // Read whole (up to 1 MiB) and STORED with its sizes up front; streamed and deflated at level 0.
      'photo.jpg': randomBytes(700 * 1024),
      'video.mp4': randomBytes(1536 * 1024),
      'scan.pdf': randomBytes(3 * 1024),
      'notes.md': Buffer.from('the same line again\n'.repeat(5000)),
      'empty.txt': Buffer.alloc(0),
    };
    for (const [name, content] of Object.entries(files)) {
      expect((await upload(stack.url, u, { filename: name, content }, { path: '/files/projects/Media/' })).status).toBe(200);
    }
    const res = await fetch(`${stack.url}/v1/agent/projects/export?name=Media`, { headers: { authorization: `Bearer ${u.token}` } });
    expect(res.status).toBe(200);
    const entries = await readWithJava(Buffer.from(await res.arrayBuffer()));
    const expected = { ...files, 'CONTEXT.md': undefined };
    expect(entries.map((e) => e.name).sort()).toEqual(Object.keys(expected).map((n) => `Media/${n}`).sort());
    for (const [name, content] of Object.entries(files)) {
      expect(entries.find((e) => e.name === `Media/${name}`)).toEqual({ name: `Media/${name}`, size: content.byteLength, sha256: sha256(content) });
    }
  });
});

const list = (h: string | null) => (h ?? '').split(',').map((v) => v.trim().toLowerCase());

describe('clients — CORS', () => {
  it('cors — a preflight from an allowed origin is 204 with the methods and headers a browser client needs', async () => {
    const res = await fetch(`${stack.url}/v1/agent/files/upload`, {
      method: 'OPTIONS',
      headers: { origin: ALLOWED, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,upload-offset,tus-resumable' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(list(res.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['get', 'post', 'patch', 'put', 'delete', 'head']));
    const headers = list(res.headers.get('access-control-allow-headers'));
    for (const h of ['authorization', 'content-type', 'if-match', 'if-none-match', 'idempotency-key', 'range', 'tus-resumable', 'upload-length', 'upload-offset', 'upload-metadata']) expect(headers).toContain(h);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/origin/i);
  });

  it('cors — every answer to an allowed origin, errors included, carries the origin and the exposed headers', async () => {
    const u = await stack.user();
    const ok = await fetch(`${stack.url}/v1/agent/projects`, { headers: { origin: ALLOWED, authorization: `Bearer ${u.token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const exposed = list(ok.headers.get('access-control-expose-headers'));
    for (const h of ['etag', 'location', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'upload-offset', 'upload-length', 'upload-expires', 'tus-resumable', 'content-disposition', 'x-request-id']) expect(exposed).toContain(h);
    const denied = await fetch(`${stack.url}/v1/agent/projects`, { headers: { origin: ALLOWED } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const missing = await fetch(`${stack.url}/v1/nothing-here`, { headers: { origin: ALLOWED } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe(ALLOWED);
  });

  it('cors — another origin gets no CORS header at all, so the browser refuses; its preflight is not answered 204', async () => {
    const u = await stack.user();
    const res = await fetch(`${stack.url}/v1/agent/projects`, { headers: { origin: OTHER, authorization: `Bearer ${u.token}` } });
    expect(res.status).toBe(200);
    for (const name of res.headers.keys()) expect(name).not.toMatch(/^access-control-/);
    const preflight = await fetch(`${stack.url}/v1/agent/projects`, { method: 'OPTIONS', headers: { origin: OTHER, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    // A near miss is another origin too.
    const near = await fetch(`${stack.url}/healthz`, { headers: { origin: `${ALLOWED}:8443` } });
    expect(near.headers.get('access-control-allow-origin')).toBeNull();
  });
});

/** GET with exactly the given Accept-Encoding, the body left encoded (node:http does not decode). */
async function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { request: httpRequest } = await import('node:http');
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('error', reject).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('clients — compression', () => {
  it('compression — JSON over 1 KiB is gzip or br as asked; small JSON and clients that do not ask get it plain', async () => {
    const { gunzipSync, brotliDecompressSync } = await import('node:zlib');
    const plain = await rawGet(`${stack.url}/openapi.json`, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const document = JSON.parse(plain.body.toString('utf8'));
    const gzip = await rawGet(`${stack.url}/openapi.json`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toMatch(/accept-encoding/i);
    expect(JSON.parse(gunzipSync(gzip.body).toString('utf8'))).toEqual(document);
    expect(gzip.body.byteLength).toBeLessThan(plain.body.byteLength / 3);
    const br = await rawGet(`${stack.url}/openapi.json`, { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.body).toString('utf8'))).toEqual(document);
    const small = await rawGet(`${stack.url}/healthz`, { 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('compression — downloads (text too), ranges and exports are never compressed: Content-Length and bytes as stored', async () => {
    const u = await stack.user();
    const text = Buffer.from('compressible text, line after line\n'.repeat(4000));
    expect((await upload(stack.url, u, { filename: 'big.md', content: text }, { path: '/files/projects/Home/' })).status).toBe(200);
    const auth = { authorization: `Bearer ${u.token}`, 'accept-encoding': 'gzip, br' };
    const whole = await rawGet(`${stack.url}/v1/agent/files/download?path=${q('/files/projects/Home/big.md')}`, auth);
    expect(whole.status).toBe(200);
    expect(whole.headers['content-encoding']).toBeUndefined();
    expect(whole.headers['content-length']).toBe(String(text.byteLength));
    expect(whole.body.equals(text)).toBe(true);
    const part = await rawGet(`${stack.url}/v1/agent/files/download?path=${q('/files/projects/Home/big.md')}`, { ...auth, range: 'bytes=100-2099' });
    expect(part.status).toBe(206);
    expect(part.headers['content-encoding']).toBeUndefined();
    expect(part.body.equals(text.subarray(100, 2100))).toBe(true);
    const zip = await rawGet(`${stack.url}/v1/agent/projects/export?name=Home`, auth);
    expect(zip.status).toBe(200);
    expect(zip.headers['content-encoding']).toBeUndefined();
    expect(zip.body.subarray(0, 4).toString('hex')).toBe('504b0304');
  });
});
