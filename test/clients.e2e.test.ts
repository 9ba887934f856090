import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { sha256 } from './support/files-api.js';
import { readWithJava } from './support/java-zip.js';
import { request, startStack, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
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
      'photo.jpg': randomBytes(700 * 1024),
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
