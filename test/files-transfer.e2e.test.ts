import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pattern, q, upload, uploadParts } from './support/files.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
let limited: Stack;
beforeAll(async () => {
  [stack, limited] = await Promise.all([startStack(), startStack({ filesEnv: { MAX_UPLOAD_BYTES: String(1024 * 1024), MAX_READ_BYTES: '1024' } })]);
});
afterAll(async () => {
  await Promise.all([stack?.stop(), limited?.stop()]);
});

const MiB = 1024 * 1024;

function download(s: Stack, u: ApiUser, path: string, headers: Record<string, string> = {}, method = 'GET') {
  return fetch(`${s.url}/v1/agent/files/download?path=${q(path)}`, { method, headers: { authorization: `Bearer ${u.token}`, ...headers } });
}

async function sha256(source: AsyncIterable<Uint8Array>): Promise<{ hex: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of source) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { hex: hash.digest('hex'), size };
}

/** Upload calls of the files service that ended without a commit: an AbortUpload, or a failed upload call. */
function uploadsGivenUp(s: Stack): number {
  return s.logsOf('files').filter((l) => String(l.method).endsWith('/AbortUpload') || (/Upload/.test(String(l.method)) && l.code !== undefined && l.code !== 'OK')).length;
}

/** Waits until the files service has heard that `count` uploads ended without a commit. */
async function uploadCallFailed(s: Stack, count: number): Promise<void> {
  await expect.poll(() => uploadsGivenUp(s), { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(count);
}

/** Starts an upload of `total` bytes and aborts the request once `abortAfter` bytes were produced. */
async function abortedUpload(s: Stack, u: ApiUser, fields: { path: string; onConflict?: string }, total: number, abortAfter: number): Promise<void> {
  const controller = new AbortController();
  async function* body() {
    let sent = 0;
    for await (const chunk of pattern(total)) {
      yield chunk;
      sent += chunk.byteLength;
      if (sent >= abortAfter) {
        controller.abort();
        return;
      }
    }
  }
  const parts = [{ name: 'path', value: fields.path }, ...(fields.onConflict ? [{ name: 'onConflict', value: fields.onConflict }] : []), { name: 'file', filename: 'big.bin', content: body() }];
  await expect(uploadParts(s.url, u, parts, { signal: controller.signal })).rejects.toThrow();
}

describe('files — download', () => {
  it('download — headers: type, length, validators, disposition, ranges', async () => {
    const u = await stack.user();
    await upload(stack.url, u, { filename: 'report.md', content: '# Report\n' }, { path: '/files/docs/' });
    const res = await download(stack, u, '/files/docs/report.md');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown');
    expect(res.headers.get('content-length')).toBe('9');
    expect(res.headers.get('etag')).toBe(`"${createHash('sha256').update('# Report\n').digest('hex')}"`);
    expect(new Date(res.headers.get('last-modified')!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="report.md"; filename*=UTF-8''report.md`);
    expect(await res.text()).toBe('# Report\n');
  });

  it('download — a name that is not plain ASCII gets an ASCII fallback and the UTF-8 name', async () => {
    const u = await stack.user();
    // Browsers send a `"` in a part's file name as %22, so the name with quotes goes in `path`.
    await upload(stack.url, u, { filename: 'x', content: '%PDF' }, { path: '/files/Résumé "final" 研究.pdf' });
    const res = await download(stack, u, '/files/Résumé "final" 研究.pdf');
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="R_sum_ _final_ __.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22%20%E7%A0%94%E7%A9%B6.pdf`,
    );
  });

  it('download — Range gives 206 with Content-Range; what cannot be served as one range gives the whole file', async () => {
    const u = await stack.user();
    await upload(stack.url, u, { filename: 'digits.txt', content: '0123456789' });
    const range = async (value: string, extra: Record<string, string> = {}) => {
      const res = await download(stack, u, '/files/digits.txt', { range: value, ...extra });
      return { status: res.status, contentRange: res.headers.get('content-range'), length: res.headers.get('content-length'), body: await res.text() };
    };
    expect(await range('bytes=2-5')).toEqual({ status: 206, contentRange: 'bytes 2-5/10', length: '4', body: '2345' });
    expect(await range('bytes=7-')).toEqual({ status: 206, contentRange: 'bytes 7-9/10', length: '3', body: '789' });
    expect(await range('bytes=-3')).toEqual({ status: 206, contentRange: 'bytes 7-9/10', length: '3', body: '789' });
    expect(await range('bytes=8-100')).toMatchObject({ status: 206, contentRange: 'bytes 8-9/10', body: '89' });
    for (const whole of ['bytes=0-1,5-6', 'bytes=20-30', 'lines=1-2', 'bytes=x-y']) expect(await range(whole), whole).toMatchObject({ status: 200, contentRange: null, body: '0123456789' });
    expect(await range('bytes=0-1', { 'if-range': '"not-the-etag"' })).toMatchObject({ status: 200, body: '0123456789' });
    const etag = (await download(stack, u, '/files/digits.txt')).headers.get('etag')!;
    expect(await range('bytes=0-1', { 'if-range': etag })).toMatchObject({ status: 206, body: '01' });
  });

  it('download — If-None-Match (or If-Modified-Since) answers 304 without a body', async () => {
    const u = await stack.user();
    await upload(stack.url, u, { filename: 'cached.txt', content: 'v1' });
    const first = await download(stack, u, '/files/cached.txt');
    const etag = first.headers.get('etag')!;
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await download(stack, u, '/files/cached.txt', { 'if-none-match': value });
      expect(res.status, value).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(await res.text()).toBe('');
    }
    expect((await download(stack, u, '/files/cached.txt', { 'if-none-match': '"stale"' })).status).toBe(200);
    expect((await download(stack, u, '/files/cached.txt', { 'if-modified-since': first.headers.get('last-modified')! })).status).toBe(304);
    await upload(stack.url, u, { filename: 'cached.txt', content: 'version 2' }, { onConflict: 'overwrite' });
    const changed = await download(stack, u, '/files/cached.txt', { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toBe('version 2');
  });

  it('download — HEAD sends the headers only; directories are 400, absent files 404', async () => {
    const u = await stack.user();
    await upload(stack.url, u, { filename: 'h.txt', content: 'hello' }, { path: '/files/dir/' });
    const head = await download(stack, u, '/files/dir/h.txt', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5');
    expect(await head.text()).toBe('');
    for (const dir of ['/files/dir', '/files']) {
      const res = await download(stack, u, dir);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('IS_A_DIRECTORY');
    }
    const missing = await download(stack, u, '/files/none');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-disposition')).toBeNull();
  });
});

describe('files — streamed transfers', () => {
  it('transfer — 100 MiB upload and download round trip with the same sha256', async () => {
    const u = await stack.user();
    const size = 100 * MiB;
    const expected = await sha256(pattern(size));
    // pattern() reuses one random block per call, so hash what is sent, as it is sent.
    const hash = createHash('sha256');
    async function* sent() {
      for await (const chunk of pattern(size)) {
        hash.update(chunk);
        yield chunk;
      }
    }
    const up = await upload(stack.url, u, { filename: 'big.bin', content: sent() });
    expect(up.status, up.text).toBe(200);
    const hex = hash.digest('hex');
    expect(up.body).toEqual({ success: true, path: '/files/big.bin', size, mimeType: 'application/octet-stream', sha256: hex });
    const res = await download(stack, u, '/files/big.bin');
    expect(res.headers.get('content-length')).toBe(String(size));
    expect(res.headers.get('etag')).toBe(`"${hex}"`);
    const got = await sha256(res.body as AsyncIterable<Uint8Array>);
    expect(got.size).toBe(size);
    expect(got.hex).toBe(hex);
    expect(expected.size).toBe(size);
    await u.request('DELETE', '/v1/agent/files?path=/files/big.bin');
    // Its 13 parts were reserved one gRPC call at a time on the request's one signal: no listener outlived its call.
    expect(stack.stderrOf('gateway')).not.toContain('MaxListenersExceededWarning');
  }, 180_000);

  it('transfer — a client that aborts mid-upload leaves nothing; an aborted overwrite keeps the old content', async () => {
    const u = await stack.user();
    const before = uploadsGivenUp(stack);
    await abortedUpload(stack, u, { path: '/files/aborted.bin' }, 50 * MiB, 20 * MiB);
    await upload(stack.url, u, { filename: 'keep.txt', content: 'the original' });
    await abortedUpload(stack, u, { path: '/files/keep.txt', onConflict: 'overwrite' }, 50 * MiB, 12 * MiB);
    await uploadCallFailed(stack, before + 2);
    expect((await u.request('GET', '/v1/agent/files?path=/files/aborted.bin')).status).toBe(404);
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/keep.txt')).body.content).toBe('the original');
    expect((await u.request('GET', '/v1/agent/files')).body.entries.map((e: { path: string }) => e.path)).toEqual(['/files/keep.txt', '/files/projects']);
  }, 120_000);

  it('transfer — of 10 concurrent error uploads to one new path exactly one succeeds, the rest 409 FILE_EXISTS', async () => {
    const u = await stack.user();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => upload(stack.url, u, { filename: 'race.bin', content: pattern(MiB + i) }, { path: '/files/race/', onConflict: 'error' })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toMatchObject({ code: 'FILE_EXISTS', details: { path: '/files/race/race.bin' } });
    const winner = results.find((r) => r.status === 200)!;
    const listed = (await u.request('GET', '/v1/agent/files?path=/files/race')).body.entries;
    expect(listed).toEqual([expect.objectContaining({ path: '/files/race/race.bin', size: winner.body.size })]);
  }, 60_000);

  it('transfer — an upload refused early (409) is answered while the client still sends, and the gateway carries on', async () => {
    const u = await stack.user();
    await upload(stack.url, u, { filename: 'taken.bin', content: 'x' });
    // Several times over: a gateway that closed the socket under the client's writes would
    // now and then lose the answer to a reset (EPIPE) instead of delivering it.
    for (let i = 0; i < 5; i++) {
      const res = await upload(stack.url, u, { filename: 'taken.bin', content: pattern(30 * MiB) });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('FILE_EXISTS');
    }
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/taken.bin')).body.content).toBe('x');
  }, 60_000);
});

describe('files — limits', () => {
  it('limits — an upload of MAX_UPLOAD_BYTES is stored; one byte more is 413 and nothing is stored', async () => {
    const u = await limited.user();
    expect((await upload(limited.url, u, { filename: 'exact.bin', content: pattern(MiB) })).body).toMatchObject({ size: MiB });
    const over = await upload(limited.url, u, { filename: 'over.bin', content: pattern(MiB + 1) });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await u.request('GET', '/v1/agent/files?path=/files/over.bin')).status).toBe(404);
    const overwrite = await upload(limited.url, u, { filename: 'exact.bin', content: pattern(3 * MiB) }, { onConflict: 'overwrite' });
    expect(overwrite.status).toBe(413);
    expect((await u.request('GET', '/v1/agent/files?path=/files/exact.bin')).body.entries[0].size).toBe(MiB);
  });

  it('limits — files/read refuses more than MAX_READ_BYTES with 413 FILE_TOO_LARGE', async () => {
    const u = await limited.user();
    await upload(limited.url, u, { filename: 'a.txt', content: 'a'.repeat(1024) });
    await upload(limited.url, u, { filename: 'b.txt', content: 'b'.repeat(1025) });
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/a.txt')).body.content).toHaveLength(1024);
    const big = await u.request('GET', '/v1/agent/files/read?path=/files/b.txt');
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('FILE_TOO_LARGE');
  });
});
