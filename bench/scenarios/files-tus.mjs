// tus-unfinished-100: what unfinished resumable uploads cost while they rest. 100 uploads each
// left with a tail shorter than a part (7 MiB of 20 MiB at the full scale): the growth of Redis's
// used_memory (the bytes must wait in the store, not in Redis), and the gateway's RSS over the
// second half of the uploads and over 100 HEADs (the first half shows what uploads in flight
// take at most; resting ones must add nothing, and a HEAD reads no bytes). The gateway's floor is
// no growth; Redis's is the smallest state a tus server must share per upload (floorState).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MiB } from '../lib/config.mjs';
import { httpRequest } from '../lib/http.mjs';
import { fmt, rss } from './files-shared.mjs';

const CONCURRENCY = 8;
/** The length of an S3 upload id when the bench cannot ask the store for one (no S3 settings). */
const FALLBACK_UPLOAD_ID_CHARS = 64;
/** A whole part's ETag as S3 answers it: an MD5 in hex, quoted. */
const ETAG_CHARS = 34;
/** How long an unfinished upload lives (the gateway's default Upload-Expires), for the floor's keys. */
const EXPIRY_MS = 24 * 3600_000;

async function usedMemory(redis) {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

/** MEMORY USAGE of `keys` (bytes each key takes, read key by key), per key: a cross-check that no other client's memory moves. */
async function memoryUsagePerKey(redis, keys) {
  if (keys.length === 0) return NaN;
  const batch = redis.pipeline();
  for (const key of keys) batch.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
  const replies = await batch.exec();
  return replies.reduce((n, [, bytes]) => n + Number(bytes ?? 0), 0) / keys.length;
}

async function pool(count, limit, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

/**
 * The length of the upload ids the stack's S3 server gives: one multipart upload in the bench's
 * bucket, completed with a 1-byte part and its object removed (s3rver cannot abort an upload).
 */
async function uploadIdChars(ctx) {
  const s3 = await ctx.baselineS3();
  if (!s3) return FALLBACK_UPLOAD_ID_CHARS;
  const key = 'tus-floor/sample.bin';
  const uploadId = await s3.client.initiateNewMultipartUpload(s3.bucket, key, {});
  const part = await s3.client.uploadPart({ bucketName: s3.bucket, objectName: key, uploadID: uploadId, partNumber: 1, headers: { 'Content-Length': '1' } }, Buffer.alloc(1));
  await s3.client.completeMultipartUpload(s3.bucket, key, uploadId, [{ part: 1, etag: part.etag }]);
  await s3.client.removeObject(s3.bucket, key);
  return uploadId.length;
}

/**
 * The floor of the Redis growth: the least a tus server whose replicas share their uploads
 * through Redis must keep there for each unfinished one, written by the bench as one hash per
 * upload (small hashes are Redis's most compact encoding) with the upload's expiry, for the
 * same upload ids, and measured as the system is (used_memory before and after). The fields:
 * its owner (HEAD and PATCH are the owner's alone), target path, length and offset, the S3
 * multipart upload's id (of the length the stack's S3 server gives) and, once a whole part is
 * in the store, the parts' ETags (numbered by their place) and the SHA-256 state after them (the
 * 32 bytes of its words, so the hash needs no second read of those bytes); none at the scenario's
 * sizes, where less than a part was sent and the tail is hashed when it is read back. The
 * bytes after the last part wait in the store, in an object named by the id and the offset, so
 * nothing else is needed: no URLs, part size or limits (the deployment's), no creation date (the
 * expiry tells it), no second record for the files service's pending upload.
 */
async function floorState(ctx, redis, { keys, warmKey, owner, total, sent, partSize }) {
  const idChars = await uploadIdChars(ctx);
  const expiresAt = Date.now() + EXPIRY_MS;
  const state = (i) => {
    const parts = Array.from({ length: Math.floor(sent / partSize) }, () => `"${randomBytes((ETAG_CHARS - 2) / 2).toString('hex')}"`);
    return {
      user: owner,
      path: `/files/tus/u-${i}.bin`,
      length: String(total),
      offset: String(sent),
      s3: randomBytes(Math.ceil(idChars / 2)).toString('hex').slice(0, idChars),
      // Before the first whole part there is nothing to carry: the tail is hashed as it is read back.
      ...(parts.length > 0 && { parts: parts.join(','), sha256: randomBytes(32) }),
    };
  };
  const write = async (key, i) => {
    await redis.hset(key, state(i));
    await redis.pexpireat(key, expiresAt);
  };
  // Warm, as the system is before its "before": the first key with an expiry may allocate what later ones reuse.
  await write(warmKey, keys.length);
  const before = await usedMemory(redis);
  // One command at a time: a pipeline would grow this connection's query buffer, which
  // used_memory counts too, past what the INFO calls leave in it.
  for (const [i, key] of keys.entries()) await write(key, i);
  const after = await usedMemory(redis);
  return { growth: after - before, perKey: await memoryUsagePerKey(redis, keys), idChars };
}

export async function tusUnfinished100(ctx) {
  const { scale, target } = ctx;
  if (!target.redisUrl) throw new Error('needs the Redis the stack uses: run with a launched stack, or set REDIS_URL with BENCH_URL');
  const user = await ctx.newUser('tus');
  const endpoint = `${target.url}/v1/agent/files/uploads`;
  const auth = { authorization: `Bearer ${user.token}`, 'tus-resumable': '1.0.0' };
  const total = scale.tusUploadBytes;
  const sent = scale.tusSentBytes;
  const body = Buffer.alloc(sent, 7);
  const redis = new Redis(target.redisUrl, { lazyConnect: true });
  await redis.connect();
  const urls = [];
  const floorKeys = [];
  try {
    // Warm: the first upload allocates what every later one reuses (JIT, pools).
    const warm = await httpRequest(endpoint, { method: 'POST', headers: { ...auth, 'upload-length': '1', 'upload-metadata': `path ${Buffer.from('/files/tus/warm.bin').toString('base64')}` } });
    if (warm.status !== 201) throw new Error(`warm-up POST: HTTP ${warm.status} ${String(warm.text).slice(0, 200)}`);
    const before = { redis: await usedMemory(redis), gateway: target.pids ? rss(target.pids.gateway) : NaN };
    const upload = async (i) => {
      const meta = `path ${Buffer.from(`/files/tus/u-${i}.bin`).toString('base64')}`;
      const created = await httpRequest(endpoint, { method: 'POST', headers: { ...auth, 'upload-length': String(total), 'upload-metadata': meta } });
      if (created.status !== 201) throw new Error(`POST: HTTP ${created.status} ${String(created.text).slice(0, 200)}`);
      const url = new URL(created.headers.location, target.url).href;
      urls.push(url);
      const patched = await httpRequest(url, { method: 'PATCH', headers: { ...auth, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': String(sent) }, body });
      if (patched.status !== 204 || patched.headers['upload-offset'] !== String(sent)) throw new Error(`PATCH: HTTP ${patched.status}, offset ${patched.headers['upload-offset']}`);
    };
    const half = Math.floor(scale.tusUploads / 2);
    await pool(half, CONCURRENCY, upload);
    const halfway = { redis: await usedMemory(redis), gateway: target.pids ? rss(target.pids.gateway) : NaN };
    await pool(scale.tusUploads - half, CONCURRENCY, (i) => upload(half + i));
    const rested = { redis: await usedMemory(redis), gateway: target.pids ? rss(target.pids.gateway) : NaN };
    for (const url of urls) {
      const head = await httpRequest(url, { method: 'HEAD', headers: auth });
      if (head.headers['upload-offset'] !== String(sent)) throw new Error(`HEAD: offset ${head.headers['upload-offset']}`);
    }
    const afterHeads = { redis: await usedMemory(redis), gateway: target.pids ? rss(target.pids.gateway) : NaN };
    // Once the system rests: nothing of it changes Redis while the floor's state is written.
    const ids = urls.map((url) => new URL(url).pathname.split('/').pop());
    // The gateway's own tus records (tus-state.redis.ts), for the notes: what of the growth is theirs.
    const recordBytes = await memoryUsagePerKey(redis, ids.map((id) => `tus:v2:{${id}}`));
    const warmKey = `bench-floor:tus:{warm-${user.sub}}`;
    floorKeys.push(warmKey, ...ids.map((id) => `bench-floor:tus:{${id}}`));
    const floor = await floorState(ctx, redis, { keys: floorKeys.slice(1), warmKey, owner: user.sub, total, sent, partSize: target.partSize });
    const m = (b) => fmt(b / MiB, 2);
    const growth = rested.redis - before.redis;
    return {
      value: growth / MiB,
      unit: 'MiB',
      floor: floor.growth / MiB,
      metrics: { gatewayRestingGrowthMiB: (afterHeads.gateway - halfway.gateway) / MiB },
      notes:
        `${scale.tusUploads} uploads of ${fmt(total / MiB, 0)} MiB left at ${fmt(sent / MiB, 0)} MiB (${CONCURRENCY} at a time); value = growth of Redis used_memory ` +
        `(${m(before.redis)} → ${m(halfway.redis)} at half → ${m(rested.redis)} MiB; after ${urls.length} HEADs ${m(afterHeads.redis)} MiB); gateway VmRSS ${m(before.gateway)} → ` +
        `${m(halfway.gateway)} MiB at half (uploads in flight) → ${m(rested.gateway)} MiB → ${m(afterHeads.gateway)} MiB after the HEADs (the metric: growth from half on; its floor: no growth). ` +
        `System: ${fmt(growth, 0)} bytes, ${fmt(growth / ids.length, 0)} per upload (the gateway's tus records alone, MEMORY USAGE: ${fmt(recordBytes, 0)} bytes each). Floor: the least shared state per upload, one hash each written by the bench for the same ${ids.length} ids ` +
        `(owner, path, length, offset, the S3 upload id of ${floor.idChars} characters${sent >= target.partSize ? ", the whole parts' ETags, the 32-byte SHA-256 state" : ''}; with the upload's expiry), used_memory +${fmt(floor.growth, 0)} bytes, ` +
        `${fmt(floor.growth / ids.length, 0)} per upload (MEMORY USAGE: ${fmt(floor.perKey, 0)} bytes each)${growth > 0 && floor.growth > 0 ? `: the system keeps ${fmt(growth / floor.growth, 1)} × as much` : '; no ratio: a growth of 0 or less (other clients of this Redis moved its memory meanwhile)'}.`,
    };
  } finally {
    await Promise.all(urls.map((url) => httpRequest(url, { method: 'DELETE', headers: auth }).catch(() => undefined)));
    if (floorKeys.length) await redis.del(...floorKeys);
    await redis.quit();
  }
}
