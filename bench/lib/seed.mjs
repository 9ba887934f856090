// Workspace files for the files scenarios, made through the API only: the files service keeps
// its own index, so an object put straight into its bucket is not a file. Small uploads at a
// fixed concurrency; a large tree is one uploaded folder and copies of it (the copy route only
// writes the index, so 100,000 files take seconds instead of the minutes of 100,000 uploads).
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { median, pool, upload } from './http.mjs';

/** Copies run this many at a time: each is one index operation on the files service. */
const COPY_CONCURRENCY = 4;

const fmt = (n, digits = 1) => (n === null || n === undefined ? 'n/a' : Number(n).toFixed(digits));

/** `(i) => Buffer` of `bytes` bytes: one random block, `i` written into the first four so no two are alike. */
export function distinctContents(bytes) {
  const block = randomBytes(Math.max(bytes, 4));
  return (i) => {
    const c = Buffer.from(block.subarray(0, bytes));
    if (bytes >= 4) c.writeUInt32BE(i >>> 0, 0);
    return c;
  };
}

/** True when the gateway has no such route (the files rewrite has not landed in the stack measured). */
export const routeMissing = (res) => res.status === 404 && res.body?.error?.code === 'ROUTE_NOT_FOUND';

/** POST /v1/agent/files/{move,copy} `{from, to, onConflict: 'error'}`; throws unless 200. */
export async function treeOp(user, op, from, to) {
  const res = await user.call('POST', `/v1/agent/files/${op}`, { from, to, onConflict: 'error' });
  if (res.status !== 200) {
    const why = routeMissing(res) ? ` (no ${op} route: the files rewrite is not in this stack)` : '';
    throw new Error(`${op} ${from} → ${to}: HTTP ${res.status}${why} ${String(res.text).slice(0, 200)}`);
  }
  return res;
}

/**
 * Uploads `paths` through the gateway, `concurrency` at a time, `content(i)` each (a Buffer);
 * throws on the first failure. Resolves with the seconds in all and each upload's ms.
 */
export async function uploadMany(ctx, user, paths, { content, concurrency = ctx.scale.fileSeedConcurrency }) {
  const latencies = new Array(paths.length);
  const started = performance.now();
  await pool(paths, concurrency, async (path, i) => {
    const body = content(i);
    const res = await upload(ctx.target.url, user.token, { path, size: body.length, content: body, onConflict: 'error' });
    if (res.status !== 200) throw new Error(`upload ${path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
    latencies[i] = res.ms;
  });
  return { seconds: (performance.now() - started) / 1000, latencies };
}

/**
 * A tree of `units` folders `root/<unitName(u)>`, each holding the files `unitFiles` (paths
 * relative to the unit) of `bytes` bytes: unit 0 is uploaded, the others are copies of it. When
 * the stack has no copy route yet, every unit is uploaded (slowly; the notes say so).
 * Resolves with {files, seconds, how} (how: a sentence for the notes).
 */
export async function seedTree(ctx, user, { root, units, unitName, unitFiles, bytes = 64 }) {
  const concurrency = ctx.scale.fileSeedConcurrency;
  const content = distinctContents(bytes);
  const unitPaths = (u) => unitFiles.map((rel) => `${root}/${unitName(u)}/${rel}`);
  const started = performance.now();
  const first = await uploadMany(ctx, user, unitPaths(0), { content });
  const uploadRate = `${unitFiles.length} uploads at ${concurrency} concurrent, ${fmt(unitFiles.length / first.seconds, 0)}/s`;
  const rest = Array.from({ length: units - 1 }, (_, i) => i + 1);
  let how = `${uploadRate}`;
  if (rest.length > 0) {
    const from = `${root}/${unitName(0)}`;
    const probe = await user.call('POST', '/v1/agent/files/copy', { from, to: `${root}/${unitName(rest[0])}`, onConflict: 'error' });
    if (routeMissing(probe)) {
      const paths = rest.flatMap(unitPaths);
      const all = await uploadMany(ctx, user, paths, { content: (i) => content(unitFiles.length + i) });
      how += `, then ${paths.length} more uploads (${fmt(paths.length / all.seconds, 0)}/s): this stack has no copy route`;
    } else {
      if (probe.status !== 200) throw new Error(`copy ${from}: HTTP ${probe.status} ${String(probe.text).slice(0, 200)}`);
      const copyMs = [probe.ms];
      await pool(rest.slice(1), COPY_CONCURRENCY, async (u) => copyMs.push((await treeOp(user, 'copy', from, `${root}/${unitName(u)}`)).ms));
      how += `, then ${rest.length} copies of that folder of ${unitFiles.length} (${COPY_CONCURRENCY} at a time, p50 ${fmt(median(copyMs), 0)} ms, max ${fmt(Math.max(...copyMs), 0)} ms each)`;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { files: units * unitFiles.length, seconds, how: `${how}; ${fmt(seconds)} s` };
}

/** `count` names `f00000.txt`…, in folders of `perDir` (`d00/`…) when `perDir` < `count`. */
export function fileNames(count, perDir, ext = 'txt') {
  const dirs = Math.ceil(count / perDir);
  const width = String(Math.max(count - 1, 1)).length;
  const dirWidth = String(Math.max(dirs - 1, 1)).length;
  return Array.from({ length: count }, (_, i) => {
    const name = `f${String(i).padStart(width, '0')}.${ext}`;
    return dirs > 1 ? `d${String(Math.floor(i / perDir)).padStart(dirWidth, '0')}/${name}` : name;
  });
}
