import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { put, sha256 } from './support/files-api.js';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';

let stack: SharedStack;
beforeAll(async () => {
  stack = sharedStack();
});
/** The key the test stack gives its gateways (packages/testkit/src/stack.ts). */
const stackKey = () => `test:${createHash('sha256').update(`links:${stack.secret}`).digest('hex')}`;

async function link(u: ApiUser, path: string, expiresIn?: number): Promise<{ url: string; expiresAt: string }> {
  const res = await u.request('POST', '/v1/agent/files/links', { path, ...(expiresIn !== undefined && { expiresIn }) });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });

async function expectGone(url: string): Promise<void> {
  const res = await get(url);
  expect(res.status).toBe(404);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('LINK_NOT_FOUND');
}

describe('temporary links', () => {
  it('links — an absolute URL that downloads with no token, with the headers of a download (ETag, Range, If-None-Match)', async () => {
    const u = await stack.user();
    const content = Buffer.from('%PDF-1.7 the report\n'.repeat(100));
    await put(stack, u, '/files/reports/Q3 "final".pdf', content);
    const before = Date.now();
    const { url, expiresAt } = await link(u, '/files/reports/Q3 "final".pdf', 600);
    expect(url.startsWith(`${stack.url}/v1/agent/files/links/`)).toBe(true);
    expect(expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    expect(Date.parse(expiresAt) - before).toBeGreaterThan(590_000);
    expect(Date.parse(expiresAt) - before).toBeLessThan(610_000);

    const res = await get(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    expect(res.headers.get('etag')).toBe(`"${sha256(content)}"`);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-length')).toBe(String(content.byteLength));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Q3 _final_.pdf"; filename*=UTF-8''Q3%20%22final%22.pdf`);
    const part = await get(url, { range: 'bytes=5-9' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 5-9/${content.byteLength}`);
    expect(await part.text()).toBe('1.7 t');
    expect((await get(url, { 'if-none-match': `"${sha256(content)}"` })).status).toBe(304);
  });

  it('links — pin the bytes they were made for: after an overwrite or a delete the link still gives the old bytes', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/a.txt', 'first');
    const { url } = await link(u, '/files/a.txt');
    await put(stack, u, '/files/a.txt', 'second', 'overwrite');
    expect(await (await get(url)).text()).toBe('first');
    expect(await (await get((await link(u, '/files/a.txt')).url)).text()).toBe('second');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/a.txt')).status).toBe(200);
    expect(await (await get(url)).text()).toBe('first');
  });

  it('links — once the bytes are reclaimed (permanent delete), the link is 404 LINK_NOT_FOUND', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/secret.txt', 'gone soon');
    const { url } = await link(u, '/files/secret.txt');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/secret.txt&permanent=true')).status).toBe(200);
    await expectGone(url);
  });

  it('links — tampered, expired, foreign-key and unknown links are 404 LINK_NOT_FOUND', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/x.txt', 'x');
    const { url } = await link(u, '/files/x.txt');
    const token = url.slice(url.lastIndexOf('/') + 1);
    const [h, p, s] = token.split('.') as [string, string, string];
    const base = url.slice(0, url.lastIndexOf('/') + 1);
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    await expectGone(`${base}${h}.${Buffer.from(JSON.stringify({ ...claims, p: '/files/other.txt' })).toString('base64url')}.${s}`);
    await expectGone(`${base}${h}.${p}.${s.slice(0, -3)}${s.endsWith('AAA') ? 'BBB' : 'AAA'}`);
    await expectGone(`${base}nonsense`);
    await expectGone(`${base}${'a'.repeat(5000)}`);
    // Signed with the stack's own key (so genuine), but expired a second ago.
    const [kid, secret] = stackKey().split(':') as [string, string];
    const key = createHash('sha256').update('workspace temporary links\0').update(secret).digest();
    const sign = (exp: number) => new SignJWT({ ...claims, exp }).setProtectedHeader({ alg: 'HS256', typ: 'workspace-link+jwt', kid }).sign(key);
    expect(await (await get(`${base}${await sign(Math.floor(Date.now() / 1000) + 60)}`)).text()).toBe('x');
    await expectGone(`${base}${await sign(Math.floor(Date.now() / 1000) - 1)}`);
  });

  it('links — bad requests are 400 with the field; directories, absent and other users\' files are refused', async () => {
    const u = await stack.user();
    const other = await stack.user();
    await put(stack, u, '/files/dir/f.txt', 'f');
    for (const [body, field] of [
      [{ path: '/files/dir/f.txt', expiresIn: 59 }, 'expiresIn'],
      [{ path: '/files/dir/f.txt', expiresIn: 86_401 }, 'expiresIn'],
      [{ path: '/files/dir/f.txt', expiresIn: '3600' }, 'expiresIn'],
      [{ path: '/files/dir/f.txt', expiresIn: 60.5 }, 'expiresIn'],
      [{ path: '/files/dir/f.txt', extra: 1 }, 'extra'],
      [{}, 'path'],
    ] as const) {
      const res = await u.request('POST', '/v1/agent/files/links', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await u.request('POST', '/v1/agent/files/links', { path: '/files/../x' })).body.error.code).toBe('INVALID_PATH');
    expect((await u.request('POST', '/v1/agent/files/links', { path: '/files/dir' })).body.error.code).toBe('IS_A_DIRECTORY');
    expect((await u.request('POST', '/v1/agent/files/links', { path: '/files/nope.txt' })).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await other.request('POST', '/v1/agent/files/links', { path: '/files/dir/f.txt' })).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await u.request('POST', '/v1/agent/files/links', { path: '/files/dir/f.txt', expiresIn: 60 })).status).toBe(201);
    expect((await fetch(`${stack.url}/v1/agent/files/links`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"path":"/files/dir/f.txt"}' })).status).toBe(401);
  });

  it('links — PUBLIC_URL names the host; keys rotate: a new first key signs, the old one still verifies until it is dropped', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/r.txt', 'rotating');
    const { url: old } = await link(u, '/files/r.txt');
    const token = old.slice(old.lastIndexOf('/') + 1);
    const newKey = `k2:${'n'.repeat(40)}`;
    const [rotated, dropped] = await Promise.all([
      stack.extraGateway({ LINK_SIGNING_KEYS: `${newKey},${stackKey()}`, PUBLIC_URL: 'https://files.example.test/' }),
      stack.extraGateway({ LINK_SIGNING_KEYS: newKey }),
    ]);
    try {
      const res = await fetch(`${rotated.url}/v1/agent/files/links`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' }, body: '{"path":"/files/r.txt"}' });
      const made = (await res.json()) as { url: string };
      expect(made.url.startsWith('https://files.example.test/v1/agent/files/links/')).toBe(true);
      const fresh = made.url.slice(made.url.lastIndexOf('/') + 1);
      expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString()).kid).toBe('k2');
      expect(await (await get(`${rotated.url}/v1/agent/files/links/${token}`)).text()).toBe('rotating');
      expect(await (await get(`${dropped.url}/v1/agent/files/links/${fresh}`)).text()).toBe('rotating');
      await expectGone(`${dropped.url}/v1/agent/files/links/${token}`);
    } finally {
      await Promise.all([rotated.stop(), dropped.stop()]);
    }
  });
});
