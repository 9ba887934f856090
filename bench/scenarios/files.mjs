// Files scenarios: upload-256mib, download-256mib, upload-1gib-rss-growth, export-1000-files,
// list-10k-files. Baselines talk to the same S3 server directly with the minio client.
import { performance } from 'node:perf_hooks';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MiB } from '../lib/config.mjs';
import { cpuMeter, cpuPer } from '../lib/cpu.mjs';
import { expectStatus, fileRepeated, httpRequest, latencyLoop, median, pool, quantile, upload } from '../lib/http.mjs';
import { startRelayServer } from '../lib/relay-server.mjs';
import { getObject, listKeys, putBuffer, putFile, putFileMultipart, timedList } from '../lib/s3.mjs';

const fmt = (n, digits = 1) => (n === null || n === undefined ? 'n/a' : Number(n).toFixed(digits));
const mibps = (bytes, ms) => bytes / MiB / (ms / 1000);
const sizeLabel = (bytes) => (bytes >= MiB ? `${fmt(bytes / MiB, 0)} MiB` : `${fmt(bytes / 1024, 0)} KiB`);

/**
 * Where the files service keeps a user's workspace in its bucket (services/files/src/domain/
 * layout.ts: `ws/<sha256 of the user id>/<path below /files>`), so the baselines read the very
 * objects the service wrote. A layout change shows up as a count mismatch, never silently.
 */
const workspacePrefix = (sub, below) => `ws/${createHash('sha256').update(sub, 'utf8').digest('hex')}/${below}`;

/** Resident set size of a process in bytes (VmRSS in /proc/<pid>/status). */
function rss(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

/** The gateway's, the files service's and the S3 server's pids (launched stack), for CPU accounting. */
const transferPids = (ctx) => ({ ...(ctx.target.pids && { gateway: ctx.target.pids.gateway, files: ctx.target.pids.files }), ...s3Pid(ctx) });
/** The embedded S3 server's pid, when known. */
const s3Pid = (ctx) => (ctx.target.s3Pid ? { s3: ctx.target.s3Pid } : {});

/** Sums what cpuMeter results say, name by name. */
function addCpu(total, cpu) {
  for (const [name, ms] of Object.entries(cpu)) total[name] = (total[name] ?? 0) + ms;
  return total;
}

/** The user, paths and objects the transfer scenarios share (an upload to download, a warm stack). */
async function transferState(ctx) {
  if (!ctx.shared.transfer) {
    const user = await ctx.newUser('transfer');
    ctx.shared.transfer = { user, file: await ctx.transferFile(), systemPath: undefined, directKey: undefined };
  }
  return ctx.shared.transfer;
}

export async function upload256(ctx) {
  const { scale } = ctx;
  const state = await transferState(ctx);
  const { file, user } = state;
  const s3 = await ctx.baselineS3();
  const system = [];
  const direct = [];
  const cpu = { system: {}, direct: {} };
  for (let rep = 0; rep < scale.transferRepeats; rep++) {
    if (s3) {
      const key = `transfer/upload-${rep}.bin`;
      const meter = cpuMeter(s3Pid(ctx));
      direct.push(mibps(file.size, (await putFile(s3.client, s3.bucket, key, file)).ms));
      addCpu(cpu.direct, meter());
      state.directKey ??= key;
    }
    const path = `/files/bench/upload-${rep}.bin`;
    const meter = cpuMeter(transferPids(ctx));
    const res = await upload(ctx.target.url, user.token, { path, size: file.size, content: fileRepeated(file.path) });
    addCpu(cpu.system, meter());
    if (res.status !== 200 || res.body?.size !== file.size) throw new Error(`upload: HTTP ${res.status} ${String(res.text).slice(0, 300)}`);
    system.push(mibps(file.size, res.ms));
    state.systemPath ??= path;
  }
  const mibs = (file.size * scale.transferRepeats) / MiB;
  let analysis = '';
  if (s3) {
    // What S3 itself costs for the service's way of storing: the length of an upload is not
    // known in advance (a multipart/form-data stream), so it can only be a multipart upload.
    const multipart = await putFileMultipart(s3.client, s3.bucket, 'transfer/multipart.bin', file, ctx.target.partSize);
    const ceiling = mibps(file.size, multipart.ms);
    analysis =
      ` Same S3, the service's pattern done directly: a multipart upload in ${sizeLabel(ctx.target.partSize)} parts (an upload's length is unknown until it ends, so a single PUT is not possible) ` +
      `${fmt(ceiling)} MiB/s (${fmt(multipart.ms / 1000, 2)} s): ratio ${fmt(ceiling / median(direct), 3)} of the single PUT is this store's ceiling for any streamed upload; the gateway reaches ${fmt(median(system) / ceiling, 3)} of it.`;
    await s3.client.removeObjects(s3.bucket, ['transfer/multipart.bin']).catch(() => undefined);
  }
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: s3 ? median(direct) : null,
    notes:
      `${sizeLabel(file.size)} from a temp file, median of ${scale.transferRepeats} (gateway ${system.map((v) => fmt(v)).join(', ')}; ` +
      `direct single streaming PUT ${s3 ? direct.map((v) => fmt(v)).join(', ') : 'n/a: no S3 settings'} MiB/s). Gateway path ${cpuPer(cpu.system, mibs, 'MiB')}` +
      `${s3 ? `; direct ${cpuPer(cpu.direct, mibs, 'MiB')}` : ''}.${analysis}`,
  };
}

export async function download256(ctx) {
  const { scale } = ctx;
  const state = await transferState(ctx);
  const { file, user } = state;
  const s3 = await ctx.baselineS3();
  // Something to download, if upload-256mib did not run.
  if (!state.systemPath) {
    state.systemPath = '/files/bench/download.bin';
    const res = await upload(ctx.target.url, user.token, { path: state.systemPath, size: file.size, content: fileRepeated(file.path) });
    if (res.status !== 200) throw new Error(`upload for download: HTTP ${res.status}`);
  }
  if (s3 && !state.directKey) {
    state.directKey = 'transfer/download.bin';
    await putFile(s3.client, s3.bucket, state.directKey, file);
  }
  const system = [];
  const direct = [];
  const relayed = [];
  const ttfb = [];
  const url = `${ctx.target.url}/v1/agent/files/download?path=${encodeURIComponent(state.systemPath)}`;
  const cpu = { system: {}, direct: {}, relay: {} };
  // The floor: one bare Node process piping the S3 GET to HTTP (the design has two, and gRPC).
  const relay = s3 && ctx.target.s3 ? await startRelayServer(ctx.target.s3, s3.bucket) : undefined;
  try {
    for (let rep = 0; rep < scale.transferRepeats; rep++) {
      if (s3) {
        const meter = cpuMeter(s3Pid(ctx));
        const got = await getObject(s3.client, s3.bucket, state.directKey);
        addCpu(cpu.direct, meter());
        if (got.bytes !== file.size) throw new Error(`direct GET returned ${got.bytes} bytes`);
        direct.push(mibps(file.size, got.ms));
      }
      const meter = cpuMeter(transferPids(ctx));
      const res = await httpRequest(url, { headers: { authorization: `Bearer ${user.token}` }, sink: 'count' });
      addCpu(cpu.system, meter());
      if (res.status !== 200 || res.bytes !== file.size) throw new Error(`download: HTTP ${res.status}, ${res.bytes} bytes`);
      system.push(mibps(file.size, res.ms));
      ttfb.push(res.ttfbMs);
      if (relay) {
        const relayMeter = cpuMeter({ relay: relay.pid, ...s3Pid(ctx) });
        const got = await httpRequest(`${relay.url}/?key=${encodeURIComponent(state.directKey)}`, { sink: 'count' });
        addCpu(cpu.relay, relayMeter());
        if (got.status !== 200 || got.bytes !== file.size) throw new Error(`relay GET: HTTP ${got.status}, ${got.bytes} bytes`);
        relayed.push(mibps(file.size, got.ms));
      }
    }
  } finally {
    await relay?.stop();
  }
  const mibs = (file.size * scale.transferRepeats) / MiB;
  const floor = relayed.length
    ? ` Floor, one bare Node hop (S3 GET piped to HTTP): ${relayed.map((v) => fmt(v)).join(', ')} MiB/s, ratio ${fmt(median(relayed) / median(direct), 3)} of direct; ${cpuPer(cpu.relay, mibs, 'MiB')}; the gateway reaches ${fmt(median(system) / median(relayed), 3)} of the floor.`
    : '';
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: s3 ? median(direct) : null,
    notes:
      `${sizeLabel(file.size)}, median of ${scale.transferRepeats} (gateway ${system.map((v) => fmt(v)).join(', ')}; direct GET ${s3 ? direct.map((v) => fmt(v)).join(', ') : 'n/a'} MiB/s); ` +
      `gateway first byte after ${fmt(median(ttfb))} ms. Gateway path ${cpuPer(cpu.system, mibs, 'MiB')}` +
      `${s3 ? `; direct ${cpuPer(cpu.direct, mibs, 'MiB')}` : ''}.${floor}`,
  };
}

export async function uploadRssGrowth(ctx) {
  const { scale } = ctx;
  const pids = ctx.target.pids;
  if (!pids) throw new Error('needs the process ids of the gateway and the files service: run with a launched stack (no BENCH_URL)');
  const state = await transferState(ctx);
  const { file, user } = state;
  const times = Math.ceil(scale.rssUploadBytes / file.size);
  const total = times * file.size;
  // Warm: first uploads allocate lazily (JIT, pools, part buffers); upload-256mib did it when it ran.
  if (!state.systemPath) {
    const res = await upload(ctx.target.url, user.token, { path: '/files/bench/warm.bin', size: file.size, content: fileRepeated(file.path) });
    if (res.status !== 200) throw new Error(`warm-up upload: HTTP ${res.status}`);
  }
  const before = { gateway: rss(pids.gateway), files: rss(pids.files) };
  const peak = { ...before, sum: before.gateway + before.files };
  const sample = () => {
    const now = { gateway: rss(pids.gateway), files: rss(pids.files) };
    peak.gateway = Math.max(peak.gateway, now.gateway);
    peak.files = Math.max(peak.files, now.files);
    peak.sum = Math.max(peak.sum, now.gateway + now.files);
  };
  const sampler = setInterval(sample, 25);
  const meter = cpuMeter(transferPids(ctx));
  let res;
  try {
    res = await upload(ctx.target.url, user.token, { path: '/files/bench/huge.bin', size: total, content: fileRepeated(file.path, times) });
  } finally {
    clearInterval(sampler);
  }
  const cpu = meter();
  sample();
  if (res.status !== 200 || res.body?.size !== total) throw new Error(`1 GiB upload: HTTP ${res.status} ${String(res.text).slice(0, 300)}`);
  await user.call('DELETE', `/v1/agent/files?path=${encodeURIComponent('/files/bench/huge.bin')}`);
  const growth = peak.sum - (before.gateway + before.files);
  const m = (b) => fmt(b / MiB);
  return {
    value: growth / MiB,
    unit: 'MiB',
    notes:
      `${sizeLabel(total)} upload at ${fmt(mibps(total, res.ms))} MiB/s (${cpuPer(cpu, total / MiB, 'MiB')}); VmRSS sampled every 25 ms: gateway ${m(before.gateway)} → peak ${m(peak.gateway)} MiB (+${m(peak.gateway - before.gateway)}), ` +
      `files ${m(before.files)} → peak ${m(peak.files)} MiB (+${m(peak.files - before.files)}); value = peak of the sum − sum before`,
  };
}

/** What the files service stores as an object's Content-Type (by extension, as mimeTypeOf does for these two). */
const CONTENT_TYPES = { bin: 'application/octet-stream', txt: 'text/plain' };

/** How many seed files go through the gateway (the rest straight into the service's bucket). */
const GATEWAY_SEED_SAMPLE = 50;

/**
 * `count` files of `bytes` each under `folder` (a path below /files), `perDir` per sub-folder.
 * The first GATEWAY_SEED_SAMPLE go through the gateway (their rate is reported); the rest are
 * PUT straight into the service's bucket in its layout, which is the whole state of a file
 * (the service keeps no index), because single-user uploads through the gateway run at a few
 * dozen a second on s3rver and 10,000 would take most of the time budget. Without a known
 * service bucket (BENCH_URL and no S3_BUCKET) every file goes through the gateway.
 */
async function seedFiles(ctx, user, { folder, count, bytes, perDir, ext }) {
  const block = randomBytes(Math.max(bytes, 4));
  const paths = Array.from({ length: count }, (_, i) => `${folder}/d${String(Math.floor(i / perDir)).padStart(3, '0')}/f${String(i).padStart(5, '0')}.${ext}`);
  const content = (i) => {
    const c = Buffer.from(block.subarray(0, bytes));
    if (bytes >= 4) c.writeUInt32BE(i, 0); // every file differs
    return c;
  };
  const s3 = ctx.target.serviceBucket ? await ctx.baselineS3() : undefined;
  const viaGateway = s3 ? Math.min(count, GATEWAY_SEED_SAMPLE) : count;
  const started = performance.now();
  await pool(paths.slice(0, viaGateway), ctx.scale.seedConcurrency, async (path, i) => {
    const res = await upload(ctx.target.url, user.token, { path, size: bytes, content: content(i), onConflict: 'error' });
    if (res.status !== 200) throw new Error(`seed ${path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
  });
  const gatewayS = (performance.now() - started) / 1000;
  if (s3) {
    const below = (path) => workspacePrefix(user.sub, path.slice('/files/'.length));
    await pool(paths.slice(viaGateway), 16, (path, i) =>
      s3.client.putObject(ctx.target.serviceBucket, below(path), content(viaGateway + i), bytes, { 'Content-Type': CONTENT_TYPES[ext] }),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const how = s3
    ? `${viaGateway} uploaded through the gateway (${fmt(viaGateway / gatewayS, 0)} uploads/s at ${ctx.scale.seedConcurrency} concurrent), ${count - viaGateway} PUT into the service's bucket directly; ${fmt(seconds)} s`
    : `all uploaded through the gateway at ${fmt(count / seconds, 0)} uploads/s (${ctx.scale.seedConcurrency} concurrent), ${fmt(seconds)} s`;
  return { paths, seconds, how };
}

export async function export1000(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('export');
  const name = `Bench Export ${randomBytes(3).toString('hex')}`;
  expectStatus(await user.call('POST', '/v1/agent/projects', { name }), 201, 'create the project');
  const fileBytes = Math.floor(scale.exportBytes / scale.exportFiles);
  const seed = await seedFiles(ctx, user, { folder: `/files/projects/${name}`, count: scale.exportFiles, bytes: fileBytes, perDir: 100, ext: 'bin' });
  const s3 = await ctx.baselineS3();
  // The baseline reads the objects the service stored (or, with a stack given by URL and no
  // S3_BUCKET, copies of the same bytes put there directly).
  let objects;
  let source;
  if (s3 && ctx.target.serviceBucket) {
    const keys = await listKeys(s3.client, ctx.target.serviceBucket, workspacePrefix(user.sub, `projects/${name}/`));
    if (keys.length < scale.exportFiles) throw new Error(`found ${keys.length} of the project's objects in the service bucket: has the files layout changed?`);
    objects = { bucket: ctx.target.serviceBucket, keys };
    source = "the service's own objects";
  } else if (s3) {
    const block = randomBytes(fileBytes);
    const keys = seed.paths.map((p) => ({ key: `export-copy${p}`, size: fileBytes }));
    await pool(keys, scale.seedConcurrency, (k) => putBuffer(s3.client, s3.bucket, k.key, block));
    objects = { bucket: s3.bucket, keys };
    source = 'objects of the same sizes put there directly';
  }
  const payload = objects ? objects.keys.reduce((n, k) => n + k.size, 0) : scale.exportFiles * fileBytes;
  const url = `${ctx.target.url}/v1/agent/projects/export?name=${encodeURIComponent(name)}`;
  const system = [];
  const ttfb = [];
  const direct = [];
  const directTtfb = [];
  let zipBytes = 0;
  const exportCpu = {};
  const directCpu = {};
  for (let rep = 0; rep < scale.exportRepeats; rep++) {
    if (objects) {
      const meter = cpuMeter(s3Pid(ctx));
      const started = performance.now();
      let first;
      for (const { key } of objects.keys) {
        const got = await getObject(s3.client, objects.bucket, key);
        first ??= got.ttfbMs;
      }
      direct.push(mibps(payload, performance.now() - started));
      addCpu(directCpu, meter());
      directTtfb.push(first);
    }
    const meter = cpuMeter(transferPids(ctx));
    const res = await httpRequest(url, { headers: { authorization: `Bearer ${user.token}` }, sink: 'count' });
    addCpu(exportCpu, meter());
    if (res.status !== 200 || res.bytes < payload) throw new Error(`export: HTTP ${res.status}, ${res.bytes} bytes`);
    zipBytes = res.bytes;
    system.push(mibps(payload, res.ms));
    ttfb.push(res.ttfbMs);
  }
  let parallel = '';
  if (objects) {
    const started = performance.now();
    await pool(objects.keys, 8, ({ key }) => getObject(s3.client, objects.bucket, key));
    parallel = `; 8 concurrent direct GETs would reach ${fmt(mibps(payload, performance.now() - started))} MiB/s`;
  }
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: objects ? median(direct) : null,
    p50: median(ttfb),
    p99: quantile(ttfb, 0.99),
    notes:
      `${objects?.keys.length ?? scale.exportFiles} files, ${fmt(payload / MiB)} MiB (${sizeLabel(fileBytes)} each; seeded: ${seed.how}); ` +
      `ZIP ${fmt(zipBytes / MiB)} MiB; MiB/s of file bytes, median of ${scale.exportRepeats} (export ${system.map((v) => fmt(v)).join(', ')}; ` +
      `baseline: sequential direct GETs of ${source ?? 'n/a: no S3 settings'} ${direct.map((v) => fmt(v)).join(', ')})${parallel}. ` +
      `p50/p99 = export time to first byte (ms); direct first object's first byte ${fmt(median(directTtfb))} ms. ` +
      `Export ${cpuPer(exportCpu, (payload * scale.exportRepeats) / MiB, 'MiB')}${objects ? `; direct ${cpuPer(directCpu, (payload * scale.exportRepeats) / MiB, 'MiB')}` : ''}`,
  };
}

/** A list run stops after this long once it has one sample: a 10k listing on s3rver takes ~30 s. */
const LIST_MAX_SECONDS = 30;

/** Waits (at most 3 minutes) until the store answers a one-key LIST within half a second again. */
async function quiesce(s3) {
  const until = performance.now() + 180_000;
  while (performance.now() < until) {
    const started = performance.now();
    try {
      for await (const _ of s3.client.listObjectsV2(s3.bucket, 'none/', false)) break;
    } catch {
      // busy or resetting: keep waiting
    }
    if (performance.now() - started < 500) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export async function list10k(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('list');
  const perDir = 100;
  const seed = await seedFiles(ctx, user, { folder: '/files/list', count: scale.listFiles, bytes: 64, perDir, ext: 'txt' });
  const dirs = Math.ceil(scale.listFiles / perDir);
  const url = `${ctx.target.url}/v1/agent/files?path=${encodeURIComponent('/files/list')}&recursive=true`;
  const headers = { authorization: `Bearer ${user.token}` };
  const opts = { seconds: scale.latencyS, minSamples: Math.min(scale.latencyMinSamples, 20), maxSeconds: LIST_MAX_SECONDS };
  const seeded = `${scale.listFiles} files in ${dirs} folders (seeded: ${seed.how})`;

  // First the same keys listed straight from the store (while nothing else uses it): what any
  // listing of them costs at least.
  const s3 = await ctx.baselineS3();
  let direct;
  if (s3 && ctx.target.serviceBucket) {
    const prefix = workspacePrefix(user.sub, 'list/');
    const samples = [];
    const pageMs = [];
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    try {
      while ((samples.length < opts.minSamples || elapsed() < opts.seconds) && !(samples.length > 0 && elapsed() >= opts.maxSeconds)) {
        const listed = await timedList(s3.client, ctx.target.serviceBucket, prefix, opts.maxSeconds);
        if (!listed.complete) {
          if (samples.length === 0) direct = { incomplete: listed };
          break;
        }
        if (listed.count !== scale.listFiles) throw new Error(`direct LIST found ${listed.count} keys (want ${scale.listFiles}): has the files layout changed?`);
        samples.push(listed.ms);
        pageMs.push(...listed.pages);
      }
      if (!direct) direct = { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), samples: samples.length, pageP50: quantile(pageMs, 0.5) };
    } catch (err) {
      if (/layout/.test(err.message)) throw err;
      direct = { failed: err.message };
    }
  }
  const directNotes = (() => {
    if (!direct) return 'No baseline: the service bucket is unknown';
    if (direct.failed) return `Baseline: the direct recursive ListObjectsV2 failed (${direct.failed})`;
    if (direct.incomplete) {
      const { pages, count, ms } = direct.incomplete;
      const needed = Math.ceil(scale.listFiles / 1000);
      return (
        `Baseline: a direct recursive ListObjectsV2 of the same keys did not finish in ${LIST_MAX_SECONDS} s: ${pages.length} pages of 1,000 (${count} keys) took ${fmt(ms / 1000, 1)} s ` +
        `(pages ${pages.map((p) => fmt(p / 1000, 1)).join(', ')} s), so the ${needed} pages of a full listing take ≈ ${fmt((needed * ms) / pages.length / 1000, 0)} s on this store`
      );
    }
    return `Baseline: direct recursive ListObjectsV2 of the same keys (1,000 per page, a page p50 ${fmt(direct.pageP50)} ms), p50 ${fmt(direct.p50)} ms, p99 ${fmt(direct.p99)} ms over ${direct.samples}`;
  })();

  const first = await httpRequest(url, { headers });
  if (first.status !== 200) {
    // The system's failure, not the bench's: reported with what bounds it.
    let code = '';
    try {
      code = JSON.parse(first.text).error.code;
    } catch {
      // not an error envelope
    }
    ctx.problem('list-10k-files', `HTTP ${first.status} ${code} after ${fmt(first.ms / 1000, 2)} s`);
    // The files service goes on listing after the deadline; let the store settle before what follows.
    if (s3) await quiesce(s3);
    return {
      value: null,
      unit: 'ms',
      baseline: direct?.p50 ?? null,
      notes: `${seeded}. The recursive list FAILED: HTTP ${first.status} ${code} after ${fmt(first.ms / 1000, 2)} s (the gateway's gRPC deadline, GRPC_DEADLINE_MS, is 5 s by default). ${directNotes}`,
    };
  }
  const entries = JSON.parse(first.text).entries?.length;
  if (entries !== scale.listFiles + dirs) throw new Error(`list: ${entries} entries (want ${scale.listFiles + dirs})`);
  const system = await latencyLoop(url, headers, opts);
  return {
    value: system.p50,
    unit: 'ms',
    baseline: direct?.p50 ?? null,
    p50: system.p50,
    p99: system.p99,
    notes: `${seeded}; recursive list of ${entries} entries, ${fmt(first.bytes / 1024, 0)} KiB of JSON; sequential, ${system.samples} requests. ${directNotes}`,
  };
}
