// tus-unfinished-100: what unfinished resumable uploads cost while they rest. 100 uploads each
// left with a tail shorter than a part (7 MiB of 20 MiB at the full scale): the growth of Redis's
// used_memory (the bytes must wait in the store, not in Redis), and the gateway's RSS over the
// second half of the uploads and over 100 HEADs (the first half shows what uploads in flight
// take at most; resting ones must add nothing, and a HEAD reads no bytes). The floor is no growth.
import { Redis } from 'ioredis';
import { MiB } from '../lib/config.mjs';
import { httpRequest } from '../lib/http.mjs';
import { fmt, rss } from './files-shared.mjs';

const CONCURRENCY = 8;

async function usedMemory(redis) {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

async function pool(count, limit, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) await fn(next++);
    }),
  );
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
    const m = (b) => fmt(b / MiB, 2);
    return {
      value: (rested.redis - before.redis) / MiB,
      unit: 'MiB',
      metrics: { gatewayRestingGrowthMiB: (afterHeads.gateway - halfway.gateway) / MiB },
      notes:
        `${scale.tusUploads} uploads of ${fmt(total / MiB, 0)} MiB left at ${fmt(sent / MiB, 0)} MiB (${CONCURRENCY} at a time); value = growth of Redis used_memory ` +
        `(${m(before.redis)} → ${m(halfway.redis)} at half → ${m(rested.redis)} MiB; after ${urls.length} HEADs ${m(afterHeads.redis)} MiB); gateway VmRSS ${m(before.gateway)} → ` +
        `${m(halfway.gateway)} MiB at half (uploads in flight) → ${m(rested.gateway)} MiB → ${m(afterHeads.gateway)} MiB after the HEADs (the metric: growth from half on). Floor: no growth.`,
    };
  } finally {
    await Promise.all(urls.map((url) => httpRequest(url, { method: 'DELETE', headers: auth }).catch(() => undefined)));
    await redis.quit();
  }
}
