// search-10k: GET /v1/agent/files/search over 10,000 source-like text files (~50 MB): a literal
// that ~10 files hold and a regex that ~100 files match. Beside it, in the same run: a parallel
// scan (every object read from the same S3 server, 16 at a time, and matched, what a search
// without an index would do) and `grep -rF` / `grep -rE` of the same files on local disk. And
// the index's memory: the Redis memory of the user's content summaries per MB of text.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { putBuffer } from '../lib/s3.mjs';
import { httpRequest, pool, quantile, upload } from '../lib/http.mjs';
import { fmt, getJson, q, timedLoop } from './files-shared.mjs';
import { startFilesFloor } from '../lib/floor-files.mjs';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';

const run = promisify(execFile);
const LITERAL = 'zqxSearchMarker';
const REGEX = 'ERR_[0-9]{4}_(fatal|warn)';
const WORDS = ['const', 'let', 'return', 'function', 'import', 'export', 'await', 'value', 'items', 'index', 'config', 'result', 'request', 'handler', 'error', 'count', 'logger', 'buffer', 'stream', 'options'];

/** A deterministic source-like file of about `bytes` bytes; file i holds the literal when i % 1000 === 7, the regex when i % 100 === 3. */
export function sourceFile(i, bytes) {
  let seed = (i + 1) * 2654435761;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  const lines = [`// file ${i}`];
  let size = 0;
  while (size < bytes) {
    const w = () => WORDS[rand(WORDS.length)];
    const line = `  ${w()} ${w()}${rand(1000)} = ${w()}.${w()}(${w()}, ${rand(100000)}); // ${w()} ${w()} ${w()}`;
    lines.push(line);
    size += line.length + 1;
  }
  if (i % 1000 === 7) lines.splice(3, 0, `  throw new Error('${LITERAL}');`);
  if (i % 100 === 3) lines.splice(5, 0, `  log('ERR_${String(1000 + (i % 9000)).padStart(4, '0')}_${i % 2 ? 'fatal' : 'warn'}');`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

async function readObject(client, bucket, key) {
  const chunks = [];
  for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function matchCount(text, re) {
  let n = 0;
  for (const line of text.split('\n')) for (const _ of line.matchAll(re)) n++;
  return n;
}

/** Every search page, following cursors: total matches and the time of the whole answer. */
async function searchAll(ctx, user, params) {
  const started = performance.now();
  let cursor;
  let matches = 0;
  let files = 0;
  for (;;) {
    const query = Object.entries({ ...params, limit: 1000, cursor }).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${q(String(v))}`).join('&');
    const { body } = await getJson(`${ctx.target.url}/v1/agent/files/search?${query}`, user);
    matches += body.matches.length;
    files += body.filesSearched;
    if (!body.hasMore) return { ms: performance.now() - started, matches, files };
    cursor = body.cursor;
  }
}

/**
 * Uploads every file, 16 at a time; an answer that says "retry later" (429, 503: this machine is
 * shared, and 10,000 uploads meet its busy moments) is retried after a pause, up to 12 times.
 */
async function seedFiles(ctx, user, paths, contents) {
  const started = performance.now();
  let retries = 0;
  await pool(paths, ctx.scale.fileSeedConcurrency, async (path, i) => {
    for (let attempt = 1; ; attempt++) {
      const res = await upload(ctx.target.url, user.token, { path, size: contents[i].length, content: contents[i], onConflict: 'overwrite' });
      if (res.status === 200) return;
      if (![429, 503].includes(res.status) || attempt === 12) throw new Error(`upload ${path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
      retries++;
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  });
  return { seconds: (performance.now() - started) / 1000, retries };
}

async function timed(fn, opts) {
  return timedLoop(async () => {
    const started = performance.now();
    await fn();
    return performance.now() - started;
  }, opts);
}

export async function search10k(ctx) {
  const { scale } = ctx;
  const count = scale.searchFiles;
  const user = await ctx.newUser('search');
  const contents = Array.from({ length: count }, (_, i) => sourceFile(i, scale.searchFileBytes));
  const totalBytes = contents.reduce((n, c) => n + c.length, 0);
  const paths = contents.map((_, i) => `/files/search/d${String(Math.floor(i / 100)).padStart(3, '0')}/f${String(i).padStart(5, '0')}.ts`);
  const seeded = await seedFiles(ctx, user, paths, contents);
  const loops = { seconds: scale.latencyS, minSamples: Math.min(scale.latencyMinSamples, 10), maxSeconds: 60 };

  // The first search reads what the background summaries did not reach yet; then the index answers.
  const cold = await searchAll(ctx, user, { q: LITERAL, caseSensitive: true });
  const literalRe = new RegExp(LITERAL, 'g');
  const regexRe = new RegExp(REGEX, 'g');
  const want = { literal: contents.reduce((n, c) => n + matchCount(c.toString(), literalRe), 0), regex: contents.reduce((n, c) => n + matchCount(c.toString(), regexRe), 0) };
  let check = { literal: 0, regex: 0, literalFiles: 0 };
  const literal = await timed(async () => {
    const r = await searchAll(ctx, user, { q: LITERAL, caseSensitive: true });
    check = { ...check, literal: r.matches, literalFiles: r.files };
  }, loops);
  const regex = await timed(async () => {
    check.regex = (await searchAll(ctx, user, { q: REGEX, regex: true, caseSensitive: true })).matches;
  }, loops);
  // The floor: the literal search's Redis and S3 calls from one bare process (lib/floor-files.mjs).
  const floorServer = await startFilesFloor(ctx);
  let floor;
  if (floorServer) {
    const url = `${floorServer.url}/search/${encodeURIComponent(user.sub)}?path=/files/search&q=${q(LITERAL)}`;
    // It starts cold, where the system has served the seeding and its own loops: a second of warm-up.
    await timed(() => httpRequest(url), { seconds: 1, minSamples: 1 });
    const meter = cpuMeter({ floor: floorServer.pid, ...(ctx.target.s3Pid && { s3: ctx.target.s3Pid }) });
    let found;
    const loop = await timed(async () => {
      found = JSON.parse((await httpRequest(url)).text);
    }, loops);
    floor = { ...loop, cpu: meter() };
    if (found?.matches?.length !== want.literal) ctx.problem('search-10k', `the floor's literal search found ${found?.matches?.length} matches, a scan ${want.literal}`);
  }
  if (check.literal !== want.literal) ctx.problem('search-10k', `the literal search found ${check.literal} matches, a scan ${want.literal}`);
  if (check.regex !== want.regex) ctx.problem('search-10k', `the regex search found ${check.regex} matches, a scan ${want.regex}`);

  // Baseline 1: the same bytes in the same S3 server, every object read 16 at a time and matched.
  let scanNote = 'no S3 settings: no parallel-scan baseline';
  let scanP50;
  let scanRegexP50;
  const s3 = await ctx.baselineS3();
  if (s3) {
    const keys = contents.map((c) => `search/${createHash('sha256').update(c).digest('hex')}`);
    await pool(keys, 16, (key, i) => putBuffer(s3.client, s3.bucket, key, contents[i]));
    const scan = async (re) => {
      let n = 0;
      await pool(keys, 16, async (key) => {
        n += matchCount((await readObject(s3.client, s3.bucket, key)).toString('utf8'), re);
      });
      return n;
    };
    const scanLiteral = await timed(() => scan(literalRe), { ...loops, minSamples: 3, seconds: 0 });
    const scanRegex = await timed(() => scan(regexRe), { ...loops, minSamples: 3, seconds: 0 });
    scanP50 = scanLiteral.p50;
    scanRegexP50 = scanRegex.p50;
    scanNote = `parallel scan of the store (16 at a time, matched in the bench process): literal p50 ${fmt(scanLiteral.p50)} ms, regex p50 ${fmt(scanRegex.p50)} ms`;
  }

  // Baseline 2: grep of the same files on local disk.
  const dir = join(tmpdir(), `search-grep-${user.sub}`);
  await pool(paths, 64, async (p, i) => {
    const file = join(dir, p);
    await mkdir(file.slice(0, file.lastIndexOf('/')), { recursive: true });
    await writeFile(file, contents[i]);
  });
  const grep = async (args) => run('grep', args, { maxBuffer: 64 * 1024 * 1024 }).catch((err) => (err.code === 1 ? { stdout: '' } : Promise.reject(err)));
  const grepF = await timed(() => grep(['-rF', LITERAL, dir]), { ...loops, minSamples: 5, seconds: 0 });
  const grepE = await timed(() => grep(['-rE', REGEX, dir]), { ...loops, minSamples: 5, seconds: 0 });
  await rm(dir, { recursive: true, force: true });

  // The index's memory: the user's summaries hash in Redis.
  let memoryNote = 'Redis not reachable from the bench: index memory not measured';
  let kibPerMB = null;
  if (ctx.target.redisUrl && ctx.target.serviceBucket) {
    const redis = new Redis(ctx.target.redisUrl);
    try {
      const key = `{u:${createHash('sha256').update(user.sub, 'utf8').digest('hex')}}:fs:${ctx.target.serviceBucket}:tri`;
      const [bytes, entries] = await Promise.all([redis.memory('USAGE', key, 'SAMPLES', 0), redis.hlen(key)]);
      kibPerMB = (bytes ?? 0) / 1024 / (totalBytes / 1e6);
      memoryNote = `index: ${entries} summaries, ${fmt((bytes ?? 0) / 1024, 0)} KiB in Redis = ${fmt((bytes ?? 0) / 1024 / (totalBytes / 1e6), 1)} KiB per MB of text`;
    } finally {
      redis.disconnect();
    }
  }
  return {
    value: literal.p50,
    unit: 'ms',
    baseline: scanP50,
    floor: floor?.p50 ?? null,
    p50: literal.p50,
    p99: literal.p99,
    ...(floor && { cpu: { per: 'search', floor: cpuPerUnit(floor.cpu, floor.samples) } }),
    metrics: {
      literalOverScan: scanP50 ? literal.p50 / scanP50 : null,
      regexOverScan: scanRegexP50 ? regex.p50 / scanRegexP50 : null,
      literalOverGrep: literal.p50 / grepF.p50,
      indexKiBPerMB: kibPerMB,
    },
    notes:
      `${count} files, ${fmt(totalBytes / 1e6)} MB (uploaded in ${fmt(seeded.seconds)} s, ${seeded.retries} retried). Search, every page (limit 1000): literal '${LITERAL}' ` +
      `(${want.literal} matches in ${want.literal} files) p50 ${fmt(literal.p50)} ms, p99 ${fmt(literal.p99)} ms over ${literal.samples} (filesSearched ${check.literalFiles}); ` +
      `regex '${REGEX}' (${want.regex} matches) p50 ${fmt(regex.p50)} ms, p99 ${fmt(regex.p99)} ms over ${regex.samples}; the first literal search after the uploads ${fmt(cold.ms)} ms. ` +
      `Baselines: ${scanNote}; grep on local disk: -rF p50 ${fmt(grepF.p50)} ms, -rE p50 ${fmt(grepE.p50)} ms. ${memoryNote}. ` +
      `p50 of the scan over the search's: ${scanP50 ? fmt(scanP50 / literal.p50) : 'n/a'}× (${fmt(quantile([literal.p50], 0.5))} ms). ` +
      (floor
        ? `Floor: the literal search by one bare process with the same Redis and S3 calls (ZRANGEBYLEX of the tree, HMGET of its summaries, S3 GETs of the files that may match, 16 at a time; bench/lib/floor-files.mjs): p50 ${fmt(floor.p50)} ms, p99 ${fmt(floor.p99)} ms over ${floor.samples}; ${cpuPer(floor.cpu, floor.samples, 'search')}`
        : "No floor: the bench cannot reach the stack's Redis"),
  };
}
