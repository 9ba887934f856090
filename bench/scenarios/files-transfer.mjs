// Large transfers: upload-256mib, download-256mib, upload-1gib-rss-growth. Baselines talk to
// the same S3 server directly with the minio client; the floors go through one bare Node hop
// (lib/relay-server.mjs) to the same server.
import { MiB } from '../lib/config.mjs';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';
import { fileRepeated, httpRequest, median, upload } from '../lib/http.mjs';
import { sharedRelay } from '../lib/relay-server.mjs';
import { over } from '../lib/report.mjs';
import { getObject, putFile, putFileMultipart } from '../lib/s3.mjs';
import { addCpu, fmt, gatewayFilesPer, mibps, q, rss, s3Pid, sizeLabel, transferPids } from './files-shared.mjs';

/** The direct baseline's parts: S3's usual multipart size, sent one at a time. */
const DIRECT_PART_SIZE = 8 * MiB;

/** The user, paths and objects the transfer scenarios share (an upload to download, a warm stack). */
async function transferState(ctx) {
  if (!ctx.shared.transfer) {
    const user = await ctx.newUser('transfer');
    ctx.shared.transfer = { user, file: await ctx.transferFile(), systemPath: undefined, directKey: undefined };
  }
  return ctx.shared.transfer;
}

const gatewayFilesNote = (perMiB) => (perMiB === undefined ? '' : `; gateway+files ${fmt(perMiB, 2)} ms per MiB`);

export async function upload256(ctx) {
  const { scale } = ctx;
  const state = await transferState(ctx);
  const { file, user } = state;
  const s3 = await ctx.baselineS3();
  // The floor: the same request to one bare Node process that parses the form, hashes the file
  // and streams it into a multipart upload of the stack's part size, two parts in flight, as
  // the gateway sends it (lib/relay-server.mjs).
  const relay = await sharedRelay(ctx);
  const system = [];
  const direct = [];
  const relayed = [];
  const floorKeys = [];
  const cpu = { system: {}, direct: {}, relay: {} };
  try {
    for (let rep = 0; rep < scale.transferRepeats; rep++) {
      if (s3) {
        // What a client of the store alone would do with a stream of unknown length.
        const key = `transfer/multipart-${rep}.bin`;
        const meter = cpuMeter(s3Pid(ctx));
        direct.push(mibps(file.size, (await putFileMultipart(s3.client, s3.bucket, key, file, DIRECT_PART_SIZE)).ms));
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
      if (relay) {
        const key = `transfer/floor-upload-${rep}.bin`;
        floorKeys.push(key);
        const relayMeter = cpuMeter({ relay: relay.pid, ...s3Pid(ctx) });
        const got = await upload(relay.url, '', { path: `/${key}`, size: file.size, content: fileRepeated(file.path) });
        addCpu(cpu.relay, relayMeter());
        if (got.status !== 200 || got.body?.size !== file.size || got.body?.sha256 !== file.sha256) throw new Error(`relay upload: HTTP ${got.status} ${String(got.text).slice(0, 300)}`);
        relayed.push(mibps(file.size, got.ms));
      }
    }
  } finally {
    if (s3 && floorKeys.length) await s3.client.removeObjects(s3.bucket, floorKeys);
  }
  const mibs = (file.size * scale.transferRepeats) / MiB;
  const perMiB = gatewayFilesPer(cpu.system, mibs);
  const partSize = ctx.target.partSize;
  const floorNote = relayed.length
    ? ` Floor: the same request to one bare Node process (busboy, SHA-256, ${file.size > partSize ? `a multipart upload of ${sizeLabel(partSize)} parts, two in flight` : `one PUT: the body fits in a ${sizeLabel(partSize)} part`}, presigned URLs), ${relayed.map((v) => fmt(v)).join(', ')} MiB/s, ${cpuPer(cpu.relay, mibs, 'MiB')}: the gateway reaches ${fmt(median(system) / median(relayed), 3)} of it.`
    : ' No floor: no S3 settings.';
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: s3 ? median(direct) : null,
    floor: relayed.length ? median(relayed) : null,
    metrics: { cpuOverFloor: over(perMiB, cpu.relay.relay / mibs) },
    cpu: { per: 'MiB', system: cpuPerUnit(cpu.system, mibs), ...(relayed.length && { floor: cpuPerUnit(cpu.relay, mibs) }), ...(s3 && { baseline: cpuPerUnit(cpu.direct, mibs) }) },
    notes:
      `${sizeLabel(file.size)} from a temp file, median of ${scale.transferRepeats} (gateway ${system.map((v) => fmt(v)).join(', ')}; ` +
      `baseline: direct multipart upload of the same bytes in ${sizeLabel(DIRECT_PART_SIZE)} parts, one at a time, ${s3 ? direct.map((v) => fmt(v)).join(', ') : 'n/a: no S3 settings'} MiB/s). ` +
      `Gateway path ${cpuPer(cpu.system, mibs, 'MiB')}${gatewayFilesNote(perMiB)}${s3 ? `; direct ${cpuPer(cpu.direct, mibs, 'MiB')}` : ''}.${floorNote}`,
  };
}

/** Makes sure there is something to download, through the gateway and in the bench's bucket. */
async function downloadable(ctx, state, s3) {
  const { file, user } = state;
  if (!state.systemPath) {
    state.systemPath = '/files/bench/download.bin';
    const res = await upload(ctx.target.url, user.token, { path: state.systemPath, size: file.size, content: fileRepeated(file.path) });
    if (res.status !== 200) throw new Error(`upload for download: HTTP ${res.status}`);
  }
  if (s3 && !state.directKey) {
    state.directKey = 'transfer/download.bin';
    await putFile(s3.client, s3.bucket, state.directKey, file);
  }
}

export async function download256(ctx) {
  const { scale } = ctx;
  const state = await transferState(ctx);
  const { file, user } = state;
  const s3 = await ctx.baselineS3();
  await downloadable(ctx, state, s3);
  const system = [];
  const direct = [];
  const relayed = [];
  const ttfb = [];
  const url = `${ctx.target.url}/v1/agent/files/download?path=${q(state.systemPath)}`;
  const cpu = { system: {}, direct: {}, relay: {} };
  // The floor: one bare Node process piping the S3 GET to HTTP, the least any gateway between
  // client and store can cost (the design's gateway streams a presigned GET the same way).
  const relay = await sharedRelay(ctx);
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
      const got = await httpRequest(`${relay.url}/?key=${q(state.directKey)}`, { sink: 'count' });
      addCpu(cpu.relay, relayMeter());
      if (got.status !== 200 || got.bytes !== file.size) throw new Error(`relay GET: HTTP ${got.status}, ${got.bytes} bytes`);
      relayed.push(mibps(file.size, got.ms));
    }
  }
  const mibs = (file.size * scale.transferRepeats) / MiB;
  const perMiB = gatewayFilesPer(cpu.system, mibs);
  const floorNote = relayed.length
    ? ` Floor: the one-hop floor, a bare Node process piping the S3 GET (the minio client) to HTTP, ${relayed.map((v) => fmt(v)).join(', ')} MiB/s, ${cpuPer(cpu.relay, mibs, 'MiB')}: the gateway reaches ${fmt(median(system) / median(relayed), 3)} of it, the floor ${fmt(median(relayed) / median(direct), 3)} of the direct GET.`
    : ' No floor: no S3 settings.';
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: s3 ? median(direct) : null,
    floor: relayed.length ? median(relayed) : null,
    metrics: { cpuOverFloor: over(perMiB, cpu.relay.relay / mibs) },
    cpu: { per: 'MiB', system: cpuPerUnit(cpu.system, mibs), ...(relayed.length && { floor: cpuPerUnit(cpu.relay, mibs) }), ...(s3 && { baseline: cpuPerUnit(cpu.direct, mibs) }) },
    notes:
      `${sizeLabel(file.size)}, median of ${scale.transferRepeats} (gateway ${system.map((v) => fmt(v)).join(', ')} MiB/s; ` +
      `baseline: a direct GET of the same bytes (no hop), ${s3 ? direct.map((v) => fmt(v)).join(', ') : 'n/a: no S3 settings'} MiB/s${s3 ? `, ${cpuPer(cpu.direct, mibs, 'MiB')}` : ''}); ` +
      `gateway first byte after ${fmt(median(ttfb))} ms. Gateway path ${cpuPer(cpu.system, mibs, 'MiB')}${gatewayFilesNote(perMiB)}.${floorNote}`,
  };
}

/**
 * The RSS of `pids` ({name: pid}) around `big()`, after `warm()`: the peak of their sum while
 * `warm()` ran, the sample before `big()` and the peaks (each, and of the sum) while it ran,
 * VmRSS sampled every 25 ms; resolves with those and what `big()` resolved with.
 */
async function rssAround(pids, warm, big) {
  const sumRss = () => Object.values(pids).reduce((n, pid) => n + rss(pid), 0);
  // Warm: first uploads allocate lazily (JIT, pools, part buffers). Its peak is sampled too: the
  // upload of `times` × as many bytes should need no more than it (memory that does not grow with
  // the body), which the single "before" sample, taken at whatever point the collector was, hides.
  let warmPeak = sumRss();
  const warmSampler = setInterval(() => (warmPeak = Math.max(warmPeak, sumRss())), 25);
  try {
    await warm();
  } finally {
    clearInterval(warmSampler);
  }
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, rss(pid)]));
  const beforeSum = Object.values(before).reduce((a, b) => a + b, 0);
  const peak = { ...before, sum: beforeSum };
  const sample = () => {
    let sum = 0;
    for (const [name, pid] of Object.entries(pids)) {
      const now = rss(pid);
      peak[name] = Math.max(peak[name], now);
      sum += now;
    }
    peak.sum = Math.max(peak.sum, sum);
  };
  const sampler = setInterval(sample, 25);
  let out;
  try {
    out = await big();
  } finally {
    clearInterval(sampler);
  }
  sample();
  return { warmPeak, before, beforeSum, peak, growth: peak.sum - beforeSum, out };
}

export async function uploadRssGrowth(ctx) {
  const { scale } = ctx;
  const pids = ctx.target.pids;
  if (!pids) throw new Error('needs the process ids of the gateway and the files service: run with a launched stack (no BENCH_URL)');
  const state = await transferState(ctx);
  const { file, user } = state;
  const times = Math.ceil(scale.rssUploadBytes / file.size);
  const total = times * file.size;
  let cpu;
  const system = await rssAround(
    { gateway: pids.gateway, files: pids.files },
    async () => {
      const res = await upload(ctx.target.url, user.token, { path: '/files/bench/warm.bin', size: file.size, content: fileRepeated(file.path) });
      if (res.status !== 200) throw new Error(`warm-up upload: HTTP ${res.status}`);
    },
    async () => {
      const started = cpuMeter(transferPids(ctx));
      const res = await upload(ctx.target.url, user.token, { path: '/files/bench/huge.bin', size: total, content: fileRepeated(file.path, times) });
      cpu = started();
      return res;
    },
  );
  const res = system.out;
  if (res.status !== 200 || res.body?.size !== total) throw new Error(`1 GiB upload: HTTP ${res.status} ${String(res.text).slice(0, 300)}`);
  await user.call('DELETE', `/v1/agent/files?path=${q('/files/bench/huge.bin')}`);
  await user.call('DELETE', `/v1/agent/files?path=${q('/files/bench/warm.bin')}`);
  // The floor: the same two uploads through the upload relay (one bare process streaming the
  // body into a multipart upload of the stack's part size, two parts in flight), its RSS
  // measured the same way: what any hop holding the parts in flight must take.
  const relay = await sharedRelay(ctx);
  let floor;
  let floorCpu;
  if (relay) {
    const s3 = await ctx.baselineS3();
    const keys = ['transfer/floor-warm.bin', 'transfer/floor-huge.bin'];
    try {
      floor = await rssAround(
        { relay: relay.pid },
        async () => {
          const got = await upload(relay.url, '', { path: `/${keys[0]}`, size: file.size, content: fileRepeated(file.path) });
          if (got.status !== 200) throw new Error(`relay warm-up upload: HTTP ${got.status} ${String(got.text).slice(0, 300)}`);
        },
        async () => {
          const started = cpuMeter({ relay: relay.pid, ...s3Pid(ctx) });
          const got = await upload(relay.url, '', { path: `/${keys[1]}`, size: total, content: fileRepeated(file.path, times) });
          floorCpu = started();
          return got;
        },
      );
      if (floor.out.status !== 200 || floor.out.body?.size !== total) throw new Error(`relay 1 GiB upload: HTTP ${floor.out.status} ${String(floor.out.text).slice(0, 300)}`);
    } finally {
      await s3.client.removeObjects(s3.bucket, keys);
    }
  }
  const m = (b) => fmt(b / MiB);
  const { before, peak, warmPeak, growth } = system;
  const floorNote = floor
    ? ` Floor: the same uploads through the upload relay, one bare Node process streaming the body into the store (${total > ctx.target.partSize ? `a multipart upload of ${sizeLabel(ctx.target.partSize)} parts, two in flight` : `one PUT: the body fits in a ${sizeLabel(ctx.target.partSize)} part`}), its VmRSS measured the same way: ` +
      `${m(floor.before.relay)} → peak ${m(floor.peak.relay)} MiB (+${m(floor.growth)}; warm-up peak ${m(floor.warmPeak)} MiB), at ${fmt(mibps(total, floor.out.ms))} MiB/s, ${cpuPer(floorCpu, total / MiB, 'MiB')}.`
    : ' No floor: no S3 settings.';
  return {
    value: growth / MiB,
    unit: 'MiB',
    floor: floor ? floor.growth / MiB : null,
    metrics: { overWarmPeakMiB: (peak.sum - warmPeak) / MiB },
    cpu: { per: 'MiB', system: cpuPerUnit(cpu, total / MiB), ...(floor && { floor: cpuPerUnit(floorCpu, total / MiB) }) },
    notes:
      `${sizeLabel(total)} upload at ${fmt(mibps(total, res.ms))} MiB/s (${cpuPer(cpu, total / MiB, 'MiB')}); VmRSS sampled every 25 ms: gateway ${m(before.gateway)} → peak ${m(peak.gateway)} MiB (+${m(peak.gateway - before.gateway)}), ` +
      `files ${m(before.files)} → peak ${m(peak.files)} MiB (+${m(peak.files - before.files)}); value = peak of the sum − sum before. ` +
      `The peak of the sum while a ${sizeLabel(file.size)} warm-up upload ran just before: ${m(warmPeak)} MiB; the ${sizeLabel(total)} upload's is ${m(peak.sum - warmPeak)} MiB above it.${floorNote}`,
  };
}
