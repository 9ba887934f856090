// Small uploads: upload-small (many at once, against direct S3 PUTs of the same files) and
// upload-deep (one file far down a new chain of folders, against the same file one level down),
// each also against the design's floor (bench/lib/floor-upload.mjs) in the same run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';
import { startUploadFloor } from '../lib/floor-upload.mjs';
import { median, pool, quantile, upload } from '../lib/http.mjs';
import { distinctContents, fileNames, uploadMany } from '../lib/seed.mjs';
import { addCpu, fmt, s3Pid, sizeLabel, stackPids } from './files-shared.mjs';
import { sourceFile } from './files-search.mjs';

/**
 * Rounds the uploads are split into, each kind taking its turn (direct, system, floor in the
 * first and third rounds, the other way round in the others): a stall of the shared store or
 * disk (writeback every few seconds) then falls on every kind alike instead of on whichever ran
 * longer.
 */
const SMALL_ROUNDS = 4;

/** The floor's processes and the S3 server: the floor's CPU, measured as the system's is. */
const floorPids = (ctx, floor) => ({ ...floor.pids, ...s3Pid(ctx) });

/** uploadMany sends to ctx.target.url: the same requests, sent to the floor instead (which reads no token). */
const viaFloor = (ctx, floor) => ({ ...ctx, target: { ...ctx.target, url: floor.url } });
const FLOOR_USER = { token: '' };

/** How long the floor is warmed up at least: it starts cold, where the stack has served the run so far. */
const FLOOR_WARMUP_S = 1;

/** Unmeasured uploads through the floor, `concurrency` at a time, for FLOOR_WARMUP_S at least (each into a folder of its own). */
async function warmFloor(ctx, floor, concurrency, content) {
  const started = performance.now();
  for (let pass = 0; pass === 0 || performance.now() - started < FLOOR_WARMUP_S * 1000; pass++) {
    const paths = Array.from({ length: concurrency }, (_, i) => `/files/floor-warm-${randomBytes(4).toString('hex')}/w${i}.bin`);
    await uploadMany(viaFloor(ctx, floor), FLOOR_USER, paths, { content: (i) => content(3e6 + pass * concurrency + i), concurrency });
  }
}

/** "Floor: …" of the upload floor's figures, for the notes. */
const FLOOR_WHAT =
  'a bare Express 5 + busboy process taking the same request and a bare gRPC server (bench/lib/floor-upload.mjs) that make the design\'s calls and no others: ' +
  "BeginUpload's STAT and PRECHECK scripts, the pending record (ZADD, MULTI of HSET and ZADD) and the reservation script with a presigned PUT, the PUT to the same S3 server, " +
  "CommitUpload's HGET of the record and the COMMIT script (with its ZADDs), events to an outbox no relay drains";
const NO_FLOOR = 'No floor: the bench cannot reach the stack\'s Redis (BENCH_URL without REDIS_URL, or a Redis Cluster) or has no S3 settings';

export async function uploadSmall(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('small');
  const concurrency = scale.fileSeedConcurrency;
  const content = distinctContents(scale.smallBytes);
  const names = fileNames(scale.smallUploads, scale.smallUploads, 'bin');
  const s3 = await ctx.baselineS3();
  const floor = s3 ? await startUploadFloor(ctx) : undefined;
  // Unmeasured warm-up of every path (connections, JIT), on files of their own.
  const warm = Array.from({ length: concurrency }, (_, i) => `warm-${i}.bin`);
  await uploadMany(ctx, user, warm.map((n) => `/files/small-warm/${n}`), { content: (i) => content(1e6 + i), concurrency });
  if (s3) await pool(warm, concurrency, (n, i) => s3.client.putObject(s3.bucket, `small-warm/${n}`, content(1e6 + i), scale.smallBytes));
  if (floor) await warmFloor(ctx, floor, concurrency, content);

  const direct = { latencies: [], seconds: 0, cpu: {} };
  const system = { latencies: [], seconds: 0, cpu: {} };
  const bare = { latencies: [], seconds: 0, cpu: {} };
  const runDirect = async (round) => {
    const meter = cpuMeter(s3Pid(ctx));
    const started = performance.now();
    await pool(round, concurrency, async ([name, i]) => {
      const t = performance.now();
      await s3.client.putObject(s3.bucket, `small/${name}`, content(i), scale.smallBytes, { 'Content-Type': 'application/octet-stream' });
      direct.latencies.push(performance.now() - t);
    });
    direct.seconds += (performance.now() - started) / 1000;
    addCpu(direct.cpu, meter());
  };
  const runSystem = async (round) => {
    const meter = cpuMeter(stackPids(ctx));
    const done = await uploadMany(ctx, user, round.map(([n]) => `/files/small/${n}`), { content: (j) => content(round[j][1]), concurrency });
    system.seconds += done.seconds;
    system.latencies.push(...done.latencies);
    addCpu(system.cpu, meter());
  };
  // The floor's user is its own, so the same paths as the system's.
  const runFloor = async (round) => {
    const meter = cpuMeter(floorPids(ctx, floor));
    const done = await uploadMany(viaFloor(ctx, floor), FLOOR_USER, round.map(([n]) => `/files/small/${n}`), { content: (j) => content(round[j][1]), concurrency });
    bare.seconds += done.seconds;
    bare.latencies.push(...done.latencies);
    addCpu(bare.cpu, meter());
  };
  const indexed = names.map((n, i) => [n, i]);
  const per = Math.ceil(indexed.length / SMALL_ROUNDS);
  for (let r = 0; r * per < indexed.length; r++) {
    const round = indexed.slice(r * per, (r + 1) * per);
    const kinds = s3 ? [runDirect, runSystem, ...(floor ? [runFloor] : [])] : [runSystem];
    for (const run of r % 2 === 0 ? kinds : kinds.reverse()) await run(round);
  }
  const rate = names.length / system.seconds;
  const directRate = s3 ? names.length / direct.seconds : null;
  const floorRate = floor ? names.length / bare.seconds : null;
  const index = await indexCost(ctx, user, concurrency, names.length);
  const p99 = quantile(system.latencies, 0.99);
  const directP99 = s3 ? quantile(direct.latencies, 0.99) : null;
  const directNote = s3
    ? `Baseline: direct S3 PUTs of the same files into the same store at ${concurrency} concurrent (minio client): ${fmt(directRate, 0)}/s, p50 ${fmt(median(direct.latencies))} ms, p99 ${fmt(directP99)} ms, ${cpuPer(direct.cpu, names.length, 'PUT')}`
    : 'No baseline: no S3 settings';
  const floorNote = floor
    ? `Floor: the same ${names.length} uploads at ${concurrency} concurrent, a third kind in each round, through ${FLOOR_WHAT}: ${fmt(floorRate, 0)}/s, p50 ${fmt(median(bare.latencies))} ms, p99 ${fmt(quantile(bare.latencies, 0.99))} ms, ${cpuPer(bare.cpu, names.length, 'upload')}`
    : NO_FLOOR;
  return {
    value: rate,
    unit: 'uploads/s',
    baseline: directRate,
    floor: floorRate,
    p50: median(system.latencies),
    p99,
    cpu: { per: 'upload', system: cpuPerUnit(system.cpu, names.length), ...(s3 && { baseline: cpuPerUnit(direct.cpu, names.length) }), ...(floor && { floor: cpuPerUnit(bare.cpu, names.length) }) },
    metrics: { p99OverDirect: directP99 ? p99 / directP99 : null, textIndexCost: index.cost },
    notes:
      `${names.length} uploads of ${sizeLabel(scale.smallBytes)} (multipart/form-data through the gateway) at ${concurrency} concurrent, in ${SMALL_ROUNDS} rounds alternating with the direct PUTs, ${fmt(system.seconds, 2)} s in all; ` +
      `p50/p99 = one upload's latency; ${cpuPer(system.cpu, names.length, 'upload')}. ${directNote}. ${floorNote}. ${index.note}.`,
  };
}

/** How long the uploads before indexCost's rounds are given to settle (their events, relayed and consumed). */
const INDEX_SETTLE_MS = 2_000;

/**
 * What the content index costs an upload (issue 26): uploads of source-like text, which the
 * gateway summarizes and the commit stores, against uploads of as many random bytes (not UTF-8:
 * nothing to summarize), alternated in rounds. Extra cost = the stack's CPU per text upload ÷
 * its CPU per binary upload − 1 (CPU, not the rate: on 2 shared CPUs the rate of a few seconds'
 * run moves by more than the cost measured).
 */
async function indexCost(ctx, user, concurrency, count) {
  const bytes = ctx.scale.smallBytes;
  const binary = distinctContents(bytes);
  const kinds = {
    text: { seconds: 0, cpu: {}, content: (i) => sourceFile(i, bytes).subarray(0, bytes) },
    binary: { seconds: 0, cpu: {}, content: (i) => binary(2e6 + i) },
  };
  const per = Math.ceil(count / SMALL_ROUNDS / 2);
  // The events of the uploads before (the relay, the webhooks consumer) settle first, so that
  // they do not land on the first round's kind.
  await new Promise((resolve) => setTimeout(resolve, INDEX_SETTLE_MS));
  for (let r = 0; r < SMALL_ROUNDS; r++) {
    for (const kind of r % 2 === 0 ? ['text', 'binary'] : ['binary', 'text']) {
      const first = r * per;
      const paths = Array.from({ length: per }, (_, j) => `/files/small-${kind}/f${first + j}.txt`);
      const meter = cpuMeter(stackPids(ctx));
      const done = await uploadMany(ctx, user, paths, { content: (j) => kinds[kind].content(first + j), concurrency });
      addCpu(kinds[kind].cpu, meter());
      kinds[kind].seconds += done.seconds;
    }
  }
  const n = per * SMALL_ROUNDS;
  // The stack's processes only: the load generator's own CPU is not the service's cost.
  const stackMs = (cpu) => Object.entries(cpu).reduce((sum, [name, ms]) => (name === 'bench' ? sum : sum + ms), 0) / n;
  const [text, bin] = [stackMs(kinds.text.cpu), stackMs(kinds.binary.cpu)];
  const cost = bin > 0 ? text / bin - 1 : null;
  return {
    cost,
    note:
      `Content index: ${n} uploads of ${sizeLabel(bytes)} of source-like text against as many of random bytes, alternated: the stack's CPU ${fmt(text, 2)} against ${fmt(bin, 2)} ms per upload ` +
      `(extra cost ${cost === null ? 'n/a' : `${fmt(cost * 100, 1)} %`}; ${fmt(n / kinds.text.seconds, 0)} against ${fmt(n / kinds.binary.seconds, 0)} uploads/s; text ${cpuPer(kinds.text.cpu, n, 'upload')}; binary ${cpuPer(kinds.binary.cpu, n, 'upload')})`,
  };
}

/** At least this many uploads of each kind, and at most this long for the whole scenario. */
const DEEP_MIN_SAMPLES = 20;
const DEEP_MAX_SECONDS = 60;

export async function uploadDeep(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('deep');
  const content = distinctContents(4096);
  // Every sample starts a new chain of `deepLevels` folders: the worst case, every ancestor new.
  const chain = (i) => `/files/deep-${String(i).padStart(4, '0')}${'/d'.repeat(scale.deepLevels - 1)}/f.bin`;
  const shallow = (i) => `/files/shallow/f${String(i).padStart(4, '0')}.bin`;
  const s3 = await ctx.baselineS3();
  const floor = s3 ? await startUploadFloor(ctx) : undefined;
  const timed = async (path, i, to = { url: ctx.target.url, token: user.token }) => {
    const body = content(i);
    const res = await upload(to.url, to.token, { path, size: body.length, content: body, onConflict: 'error' });
    if (res.status !== 200) throw new Error(`upload ${path.length > 80 ? `${path.slice(0, 40)}…${path.slice(-30)}` : path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
    return res.ms;
  };
  // The floor's user is its own: the same chains, sent to the floor.
  const viaFloorTo = floor && { url: floor.url, token: FLOOR_USER.token };
  // Unmeasured warm-up; then the kinds alternate, so drift on a shared machine hits them alike.
  await timed(chain(9999), 9999);
  await timed(shallow(9999), 9998);
  if (floor) {
    await warmFloor(ctx, floor, ctx.scale.fileSeedConcurrency, content);
    await timed(chain(9999), 9999, viaFloorTo);
  }
  const deep = [];
  const flat = [];
  const bare = [];
  const deepCpu = {};
  const floorCpu = {};
  const minSamples = Math.min(scale.latencyMinSamples, DEEP_MIN_SAMPLES);
  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  for (let i = 0; (i < minSamples || elapsedS() < scale.latencyS) && !(i > 0 && elapsedS() >= DEEP_MAX_SECONDS); i++) {
    const meter = cpuMeter(stackPids(ctx));
    deep.push(await timed(chain(i), 2 * i));
    addCpu(deepCpu, meter());
    flat.push(await timed(shallow(i), 2 * i + 1));
    if (!floor) continue;
    const floorMeter = cpuMeter(floorPids(ctx, floor));
    bare.push(await timed(chain(i), 2 * i, viaFloorTo));
    addCpu(floorCpu, floorMeter());
  }
  const depth = scale.deepLevels;
  const floorNote = floor
    ? `Floor: the same uploads of new chains, alternated with them, through ${FLOOR_WHAT}: p50 ${fmt(median(bare))} ms, p99 ${fmt(quantile(bare, 0.99))} ms over ${bare.length}, ${cpuPer(floorCpu, bare.length, 'upload')}`
    : NO_FLOOR;
  return {
    value: median(deep),
    unit: 'ms',
    baseline: median(flat),
    floor: floor ? median(bare) : null,
    p50: median(deep),
    p99: quantile(deep, 0.99),
    cpu: { per: 'upload', system: cpuPerUnit(deepCpu, deep.length), ...(floor && { floor: cpuPerUnit(floorCpu, bare.length) }) },
    notes:
      `Sequential uploads of 4 KiB, each into ${depth} nested folders that did not exist yet (${chain(0).length} bytes of path): ` +
      `p50 ${fmt(median(deep))} ms, p99 ${fmt(quantile(deep, 0.99))} ms over ${deep.length}; ${cpuPer(deepCpu, deep.length, 'upload')}. ` +
      `Baseline: the same uploads one level below /files, alternated with them: p50 ${fmt(median(flat))} ms, p99 ${fmt(quantile(flat, 0.99))} ms over ${flat.length}. ${floorNote}`,
  };
}
