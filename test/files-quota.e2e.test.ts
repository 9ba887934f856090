import { tenantKey } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client, testRedis } from './support/backends.js';
import { multipart, pattern, q, upload } from './support/files.js';
import { multipartBytes, newBoundary, put, rawUpload, statusOf, jsonOf } from './support/files-api.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

const MiB = 1024 * 1024;
/** Parts of 5 MiB (the store's smallest): a body over it goes part by part, each reserved before it is sent. */
const PART = 5 * MiB;
const QUOTA = 12 * MiB;
const MAX_AGENTS = 3;
const PENDING_MS = 3_000;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    env: { MAX_AGENTS: String(MAX_AGENTS) },
    // Uploads that go 3 s without a call are ended by the sweeper, unless they asked to live longer (tus).
    filesEnv: { FILE_QUOTA_BYTES: String(QUOTA), S3_PART_SIZE: String(PART), FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500', UPLOAD_PENDING_MS: String(PENDING_MS) },
    gatewayEnv: { MAX_CONCURRENT_UPLOADS: '32' },
  });
});
afterAll(async () => {
  await stack?.stop();
});

interface Usage {
  files: { count: number; bytes: number; quotaBytes: number; entries: number; entriesLimit: number };
  checkpoints: { count: number; bytes: number; limit: number };
  agents: { count: number; limit: number };
}

async function usage(u: ApiUser): Promise<Usage> {
  const res = await u.request('GET', '/v1/usage');
  expect(res.status, res.text).toBe(200);
  return res.body as Usage;
}

/** The bucket's objects of the user, and the objects the index references: equal once the sweep has run. */
function bucketOf(u: ApiUser) {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const s3 = s3Client();
  return {
    stored: async () => {
      const keys: string[] = [];
      for await (const o of s3.listObjectsV2(bucket, `b/${tenantKey(u.sub)}/`, true) as AsyncIterable<{ name?: string }>) if (o.name) keys.push(o.name);
      return keys.sort();
    },
    referenced: async () => {
      const redis = testRedis('quota-refs');
      try {
        return (await redis.hkeys(`{u:${tenantKey(u.sub)}}:fs:${bucket}:refs`)).sort();
      } finally {
        await redis.quit();
      }
    },
  };
}

/** Sends an upload of `total` bytes over a raw socket, `chunk` at a time, until the gateway answers or closes. */
async function streamUntilAnswered(u: ApiUser, path: string, total: number, chunk = MiB): Promise<{ status: number; code: string | undefined; sent: number }> {
  const boundary = newBoundary();
  const head = multipartBytes(boundary, [{ name: 'path', value: path }, { name: 'file', filename: 'big.bin', content: new Uint8Array(0) }], { closing: false });
  // The head ends with the (empty) content's CRLF: drop it, the file's bytes follow.
  const opening = head.subarray(0, head.length - 2);
  const closing = Buffer.from(`\r\n--${boundary}--\r\n`);
  const raw = await rawUpload(stack.url, u, { boundary, contentLength: opening.length + total + closing.length, requestId: `quota-${Date.now()}` });
  let answered = false;
  raw.socket.once('data', () => (answered = true));
  raw.socket.once('close', () => (answered = true));
  await raw.write(opening);
  let sent = 0;
  const block = Buffer.alloc(chunk, 7);
  try {
    while (sent < total && !answered) {
      const n = Math.min(chunk, total - sent);
      await raw.write(block.subarray(0, n));
      sent += n;
    }
    if (!answered) await raw.write(closing);
  } catch {
    // The gateway closed the connection under our writes: the answer is in what it sent.
  }
  const { response } = await raw.closed;
  return { status: statusOf(response), code: jsonOf(response)?.error?.code, sent };
}

describe('files — the byte quota (FILE_QUOTA_BYTES) while uploads stream', () => {
  it('quota — an upload that would pass the quota is refused (403) while its body still streams; its reservation is given back', async () => {
    const u = await stack.user();
    const { stored, referenced } = bucketOf(u);
    const before = await usage(u);
    const refused = await streamUntilAnswered(u, '/files/big.bin', 40 * MiB);
    expect(refused.status).toBe(403);
    expect(refused.code).toBe('QUOTA_EXCEEDED');
    expect(refused.sent, 'answered long before the 40 MiB were sent').toBeLessThan(30 * MiB);
    // Nothing of it stays: not the file, not its bytes, not its reservation.
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/big.bin')}`)).status).toBe(404);
    expect((await usage(u)).files).toEqual(before.files);
    await expect.poll(async () => JSON.stringify(await stored()), { timeout: 30_000, interval: 500 }).toBe(JSON.stringify(await referenced()));
    // The room is whole again: 11 MiB (more than what the refused upload had reserved beside it) fits.
    const fits = await upload(stack.url, u, { filename: 'fits.bin', content: pattern(11 * MiB) }, { path: '/files/fits.bin' });
    expect(fits.status, fits.text).toBe(200);
    expect((await usage(u)).files.bytes).toBe(before.files.bytes + 11 * MiB);
  }, 120_000);

  it('quota — a client that goes away mid-upload gives its reservation back', async () => {
    const u = await stack.user();
    const boundary = newBoundary();
    const head = multipartBytes(boundary, [{ name: 'path', value: '/files/cut.bin' }, { name: 'file', filename: 'cut.bin', content: new Uint8Array(0) }], { closing: false });
    const raw = await rawUpload(stack.url, u, { boundary, contentLength: head.length + 11 * MiB, requestId: `cut-${Date.now()}` });
    await raw.write(head.subarray(0, head.length - 2));
    // Two parts' worth: the first is reserved and sent once a byte of the second follows.
    for (let i = 0; i < 10; i++) await raw.write(Buffer.alloc(MiB, i));
    const redis = testRedis('quota-reserved');
    const reservedKey = `{u:${tenantKey(u.sub)}}:fs:${stack.services.files!.env.S3_BUCKET!}:rsvt`;
    try {
      await expect.poll(async () => Number(await redis.get(reservedKey)), { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(PART);
      raw.socket.destroy();
      await raw.closed;
      // The abort gives the reservation back; then 11 MiB fit again.
      await expect.poll(() => redis.exists(reservedKey), { timeout: 30_000, interval: 100 }).toBe(0);
    } finally {
      await redis.quit();
    }
    const after = await upload(stack.url, u, { filename: 'after.bin', content: pattern(11 * MiB) }, { path: '/files/after.bin' });
    expect(after.status, after.text).toBe(200);
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/cut.bin')}`)).status).toBe(404);
  }, 120_000);

  it('quota — 20 concurrent uploads that together pass the quota: only those that fit succeed, nothing else is stored', async () => {
    const u = await stack.user();
    const { stored, referenced } = bucketOf(u);
    const room = QUOTA - (await usage(u)).files.bytes;
    const size = MiB;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => upload(stack.url, u, { filename: `f${i}.bin`, content: Buffer.alloc(size, i) }, { path: `/files/many/f${i}.bin` })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    // The figures are JSON integers (bytes), not text.
    for (const r of results) if (r.status !== 200) expect(r.body?.error, r.text).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'FILE_QUOTA_BYTES', limit: QUOTA, used: expect.any(Number) } });
    for (const r of results) if (r.status !== 200) expect(Number.isInteger(r.body.error.details.used) && r.body.error.details.used + size > QUOTA, r.text).toBe(true);
    expect(ok).toBe(Math.floor(room / size));
    const after = await usage(u);
    expect(after.files.bytes).toBeLessThanOrEqual(QUOTA);
    expect(after.files.bytes).toBe(QUOTA - room + ok * size);
    await expect.poll(async () => JSON.stringify(await stored()), { timeout: 30_000, interval: 500 }).toBe(JSON.stringify(await referenced()));
  }, 120_000);
});

describe('files — the byte quota and resumable uploads (tus)', () => {
  const create = (u: ApiUser, length: number, path: string) =>
    fetch(`${stack.url}/v1/agent/files/uploads`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${u.token}`,
        'tus-resumable': '1.0.0',
        'upload-length': String(length),
        'upload-metadata': `path ${Buffer.from(path).toString('base64')}`,
      },
    });

  it('quota — a tus upload reserves its Upload-Length at creation: refused (403) when it cannot fit, held while it is pending, given back when it is terminated', async () => {
    const u = await stack.user();
    const tooBig = await create(u, QUOTA + 1, '/files/t/huge.bin');
    expect(tooBig.status).toBe(403);
    expect(((await tooBig.json()) as { error: { code: string } }).error.code).toBe('QUOTA_EXCEEDED');
    const first = await create(u, 8 * MiB, '/files/t/first.bin');
    expect(first.status).toBe(201);
    const location = first.headers.get('location')!;
    // 8 MiB are held: another 8 MiB do not fit beside them.
    const second = await create(u, 8 * MiB, '/files/t/second.bin');
    expect(second.status).toBe(403);
    const terminated = await fetch(location, { method: 'DELETE', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' } });
    expect(terminated.status).toBe(204);
    expect((await create(u, 8 * MiB, '/files/t/second.bin')).status).toBe(201);
  });

  it('tus — an unfinished upload outlives UPLOAD_PENDING_MS (it lives until Upload-Expires) and completes when resumed later, with the right bytes', async () => {
    const u = await stack.user();
    const headers = { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream' };
    const bytes = Buffer.from('the first half|the second half');
    const created = await fetch(`${stack.url}/v1/agent/files/uploads`, {
      method: 'POST',
      headers: { ...headers, 'upload-length': String(bytes.length), 'upload-metadata': `path ${Buffer.from('/files/t/later.txt').toString('base64')}` },
      body: bytes.subarray(0, 15),
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    // What is under test is time passing: three pending lifetimes and several sweeps.
    await new Promise((resolve) => setTimeout(resolve, 3 * PENDING_MS + 1_000));
    const resumed = await fetch(location, { method: 'PATCH', headers: { ...headers, 'upload-offset': '15' }, body: bytes.subarray(15) });
    expect(resumed.status, await resumed.text()).toBe(204);
    const read = await u.request('GET', `/v1/agent/files/read?path=${q('/files/t/later.txt')}`);
    expect(read.body.content).toBe(bytes.toString());
  });
});

describe('usage — GET /v1/usage', () => {
  it('usage — files: count and bytes of every distinct content (revisions and trash too, copies once), the quota; agents: count and MAX_AGENTS', async () => {
    const u = await stack.user();
    const start = await usage(u);
    // The first request made Home and its context file: the folders projects and Home and the file are 3 entries (MAX_FILES).
    expect(start).toEqual({ files: { count: 1, bytes: start.files.bytes, quotaBytes: QUOTA, entries: 3, entriesLimit: 1_000_000 }, checkpoints: { count: 0, bytes: 0, limit: 100 }, agents: { count: 0, limit: MAX_AGENTS } });
    expect(start.files.bytes).toBeGreaterThan(0);
    await put(stack, u, '/files/u/a.bin', Buffer.alloc(1000, 1));
    expect((await usage(u)).files).toMatchObject({ count: 2, bytes: start.files.bytes + 1000 });
    // A copy shares its bytes; an overwrite keeps the old content as a revision.
    expect((await u.request('POST', '/v1/agent/files/copy', { from: '/files/u/a.bin', to: '/files/u/b.bin' })).status).toBe(200);
    expect((await usage(u)).files).toMatchObject({ count: 3, bytes: start.files.bytes + 1000 });
    await put(stack, u, '/files/u/a.bin', Buffer.alloc(300, 2));
    expect((await usage(u)).files).toMatchObject({ count: 3, bytes: start.files.bytes + 1300 });
    // A delete keeps the bytes in the trash; a permanent delete of the folder gives back what nothing else holds.
    expect((await u.request('DELETE', `/v1/agent/files?path=${q('/files/u/b.bin')}`)).status).toBe(200);
    expect((await usage(u)).files).toMatchObject({ count: 2, bytes: start.files.bytes + 1300 });
    expect((await u.request('DELETE', `/v1/agent/files?path=${q('/files/u')}&recursive=true&permanent=true`)).status).toBe(200);
    expect((await usage(u)).files).toEqual(start.files);
    // Agents count up to MAX_AGENTS; one more is refused and counted nowhere.
    for (let i = 0; i < MAX_AGENTS; i++) expect((await u.request('POST', '/v1/agents', { name: `agent ${i}` })).status).toBe(201);
    const full = await u.request('POST', '/v1/agents', { name: 'one more' });
    expect(full.status).toBe(403);
    expect(full.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_AGENTS', limit: MAX_AGENTS, used: MAX_AGENTS } });
    expect((await usage(u)).agents).toEqual({ count: MAX_AGENTS, limit: MAX_AGENTS });
    // Another user's usage is their own.
    const other = await stack.user();
    expect((await usage(other)).agents.count).toBe(0);
  });

  it('usage — needs a token (401 in the envelope); only GET (405)', async () => {
    const res = await fetch(`${stack.url}/v1/usage`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    const u = await stack.user();
    const { contentType } = multipart([]);
    expect((await u.request('POST', '/v1/usage', {}, { 'content-type': contentType })).status).toBe(405);
  });
});
