import { randomBytes } from 'node:crypto';
import { Upload } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCuttingProxy, type CuttingProxy } from './support/cutting-proxy.js';
import { q, upload as formUpload } from './support/files.js';
import { sha256 } from './support/files-api.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
/** Between the clients and the gateway where a test needs the network to drop mid-body. */
let proxy: CuttingProxy;
beforeAll(async () => {
  stack = await startStack();
  proxy = await startCuttingProxy(stack.url);
});
afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
});

const MiB = 1024 * 1024;
const ENDPOINT = () => `${stack.url}/v1/agent/files/uploads`;

interface TusRun {
  upload: Upload;
  done: Promise<void>;
}

/** A tus-js-client upload, as an application would run it (no retries: the test decides). */
function tus(u: ApiUser, data: Buffer, metadata: Record<string, string>, extra: Partial<ConstructorParameters<typeof Upload>[1]> = {}): TusRun {
  let upload!: Upload;
  const done = new Promise<void>((resolve, reject) => {
    upload = new Upload(data, { endpoint: ENDPOINT(), headers: { authorization: `Bearer ${u.token}` }, metadata, retryDelays: [], onSuccess: () => resolve(), onError: reject, ...extra });
  });
  upload.start();
  return { upload, done };
}

/** A tus-js-client upload through the proxy, whose connection drops after `afterBytes`; returns once the client gave up. */
async function cutOff(u: ApiUser, data: Buffer, metadata: Record<string, string>, afterBytes: number): Promise<TusRun> {
  const cut = proxy.cutAfter(afterBytes);
  const run = tus(u, data, metadata, { endpoint: `${proxy.url}/v1/agent/files/uploads` });
  await cut;
  await expect(run.done).rejects.toThrow();
  return run;
}

const head = (u: ApiUser, url: string) => fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' } });

async function stored(u: ApiUser, path: string): Promise<{ size: number; sha256: string } | undefined> {
  const res = await u.request('GET', `/v1/agent/files?path=${q(path)}`);
  return res.status === 200 ? res.body.entries[0] : undefined;
}

describe('resumable uploads — tus 1.0 with tus-js-client', () => {
  it('tus — an upload is stored with its bytes and committed when its last byte arrives; HEAD then shows offset = length', async () => {
    const u = await stack.user();
    const data = randomBytes(100 * 1024);
    const run = tus(u, data, { filename: 'photo.jpg', path: '/files/camera/' });
    await run.done;
    expect(await stored(u, '/files/camera/photo.jpg')).toMatchObject({ size: data.byteLength, sha256: sha256(data), mimeType: 'image/jpeg' });
    const res = await head(u, run.upload.url!);
    expect(res.status).toBe(200);
    expect(res.headers.get('upload-offset')).toBe(String(data.byteLength));
    expect(res.headers.get('upload-length')).toBe(String(data.byteLength));
    expect(res.headers.get('tus-resumable')).toBe('1.0.0');
  });

  it('tus — cut off halfway, resumed from the offset the server kept: the stored file has the right sha256', async () => {
    const u = await stack.user();
    const data = randomBytes(20 * MiB);
    // The network drops mid-body (the proxy cuts the connection after 12 MiB), not the client.
    const first = await cutOff(u, data, { filename: 'big.bin' }, 12 * MiB);
    const url = first.upload.url!;
    expect(url.startsWith(proxy.url)).toBe(true);
    // What the server kept: the whole parts that reached the store before the cut.
    await expect.poll(async () => Number((await head(u, url)).headers.get('upload-offset')), { timeout: 30_000 }).toBeGreaterThan(0);
    const kept = Number((await head(u, url)).headers.get('upload-offset'));
    expect(kept).toBeLessThan(data.byteLength);
    expect(await stored(u, '/files/big.bin')).toBeUndefined();
    const resumed = tus(u, data, { filename: 'big.bin' }, { uploadUrl: url });
    await resumed.done;
    expect(await stored(u, '/files/big.bin')).toMatchObject({ size: data.byteLength, sha256: sha256(data) });
  });

  it('tus — a client sending small chunks (one PATCH each) gets every byte kept between requests', async () => {
    const u = await stack.user();
    const data = randomBytes(3 * MiB + 5);
    await tus(u, data, { filename: 'chunks.bin', onConflict: 'overwrite' }, { chunkSize: MiB }).done;
    expect(await stored(u, '/files/chunks.bin')).toMatchObject({ size: data.byteLength, sha256: sha256(data) });
  });

  it('tus — a conflict found when the last byte arrives is 409 in the envelope and nothing is stored', async () => {
    const u = await stack.user();
    const create = await fetch(ENDPOINT(), {
      method: 'POST',
      headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': `path ${Buffer.from('/files/c.txt').toString('base64')}` },
    });
    expect(create.status).toBe(201);
    const url = create.headers.get('location')!;
    expect(create.headers.get('upload-expires')).toBeTruthy();
    // A creation answers its offset, and a HEAD when the upload expires, as tus-js-client and Uppy read them.
    expect(create.headers.get('upload-offset')).toBe('0');
    const resting = await head(u, url);
    expect(resting.headers.get('upload-expires')).toBe(create.headers.get('upload-expires'));
    // The tus HEAD is a HEAD: a GET of the upload is no operation (405, and Allow says what is).
    const get = await fetch(url, { headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')?.split(', ')).toEqual(['DELETE', 'HEAD', 'PATCH']);
    expect((await formUpload(stack.url, u, { filename: 'c.txt', content: 'first' }, { path: '/files/c.txt' })).status).toBe(200);
    const patch = await fetch(url, { method: 'PATCH', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: 'later' });
    expect(patch.status).toBe(409);
    expect(((await patch.json()) as { error: { code: string } }).error.code).toBe('FILE_EXISTS');
    expect((await head(u, url)).status).toBe(404);
    expect(await stored(u, '/files/c.txt')).toMatchObject({ sha256: sha256('first') });
    // A conflict already there at creation is refused at once.
    const early = await fetch(ENDPOINT(), {
      method: 'POST',
      headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': `path ${Buffer.from('/files/c.txt').toString('base64')}` },
    });
    expect(early.status).toBe(409);
  });

  it('tus — a terminated upload leaves nothing, and its URL is gone', async () => {
    const u = await stack.user();
    const data = randomBytes(24 * MiB);
    // Cut off after 10 MiB (some parts are in the store), then the client terminates the upload.
    const run = await cutOff(u, data, { filename: 'gone.bin' }, 10 * MiB);
    await run.upload.abort(true);
    expect((await head(u, run.upload.url!)).status).toBe(404);
    expect(await stored(u, '/files/gone.bin')).toBeUndefined();
    await expect.poll(() => stack.logsOf('files').some((l) => String(l.method).endsWith('/AbortUpload')), { timeout: 20_000 }).toBe(true);
  });

  it('tus — an upload that is not finished in time expires and leaves nothing', async () => {
    const u = await stack.user();
    const gateway = await stack.extraGateway({ TUS_UPLOAD_EXPIRY_MS: '1500' });
    try {
      const headers = { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' };
      const create = await fetch(`${gateway.url}/v1/agent/files/uploads`, {
        method: 'POST',
        headers: { ...headers, 'upload-length': '10', 'upload-metadata': `filename ${Buffer.from('late.txt').toString('base64')}`, 'content-type': 'application/offset+octet-stream' },
        body: 'half.',
      });
      expect(create.status).toBe(201);
      expect(create.headers.get('upload-offset')).toBe('5');
      const expires = Date.parse(create.headers.get('upload-expires')!);
      expect(expires - Date.now()).toBeLessThan(2_000);
      const url = create.headers.get('location')!;
      await expect.poll(async () => (await fetch(url, { method: 'HEAD', headers })).status, { timeout: 10_000 }).toBe(404);
      const late = await fetch(url, { method: 'PATCH', headers: { ...headers, 'upload-offset': '5', 'content-type': 'application/offset+octet-stream' }, body: 'rest.' });
      expect(late.status).toBe(404);
      expect(await stored(u, '/files/late.txt')).toBeUndefined();
    } finally {
      await gateway.stop();
    }
  });

  it('tus — authenticated like every route; another user\'s upload is 404; protocol errors are in the envelope', async () => {
    const u = await stack.user();
    const other = await stack.user();
    const noToken = await fetch(ENDPOINT(), { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '1' } });
    expect(noToken.status).toBe(401);
    const create = await fetch(ENDPOINT(), { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': '3', 'upload-metadata': `filename ${Buffer.from('mine.txt').toString('base64')}` } });
    const url = create.headers.get('location')!;
    expect((await head(other, url)).status).toBe(404);
    const wrongOffset = await fetch(url, { method: 'PATCH', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-offset': '1', 'content-type': 'application/offset+octet-stream' }, body: 'ab' });
    expect(wrongOffset.status, await wrongOffset.clone().text()).toBe(409);
    expect(((await wrongOffset.json()) as { error: { code: string } }).error.code).toBe('UPLOAD_OFFSET_MISMATCH');
    const noVersion = await fetch(ENDPOINT(), { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'upload-length': '1' } });
    expect(noVersion.status).toBe(412);
    expect(((await noVersion.json()) as { error: { code: string } }).error.code).toBe('PRECONDITION_FAILED');
    const badConflict = await fetch(ENDPOINT(), {
      method: 'POST',
      headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': `filename ${Buffer.from('x').toString('base64')},onConflict ${Buffer.from('merge').toString('base64')}` },
    });
    expect(badConflict.status).toBe(400);
    expect(((await badConflict.json()) as { error: { details: { field: string } } }).error.details.field).toBe('Upload-Metadata.onConflict');
  });
});
