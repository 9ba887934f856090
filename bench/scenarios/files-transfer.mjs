// Large transfers: upload-256mib, download-256mib, upload-1gib-rss-growth. Baselines talk to
// the same S3 server directly with the minio client, or through one bare Node hop.
import { MiB } from '../lib/config.mjs';
import { cpuMeter, cpuPer } from '../lib/cpu.mjs';
import { fileRepeated, httpRequest, median, upload } from '../lib/http.mjs';
import { startRelayServer } from '../lib/relay-server.mjs';
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
  const system = [];
  const direct = [];
  const cpu = { system: {}, direct: {} };
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
  }
  const mibs = (file.size * scale.transferRepeats) / MiB;
  const perMiB = gatewayFilesPer(cpu.system, mibs);
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: s3 ? median(direct) : null,
    metrics: { cpuPerMiB: perMiB },
    notes:
      `${sizeLabel(file.size)} from a temp file, median of ${scale.transferRepeats} (gateway ${system.map((v) => fmt(v)).join(', ')}; ` +
      `baseline: direct multipart upload of the same bytes in ${sizeLabel(DIRECT_PART_SIZE)} parts, one at a time, ${s3 ? direct.map((v) => fmt(v)).join(', ') : 'n/a: no S3 settings'} MiB/s). ` +
      `Gateway path ${cpuPer(cpu.system, mibs, 'MiB')}${gatewayFilesNote(perMiB)}${s3 ? `; direct ${cpuPer(cpu.direct, mibs, 'MiB')}` : ''}.`,
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
        const got = await httpRequest(`${relay.url}/?key=${q(state.directKey)}`, { sink: 'count' });
        addCpu(cpu.relay, relayMeter());
        if (got.status !== 200 || got.bytes !== file.size) throw new Error(`relay GET: HTTP ${got.status}, ${got.bytes} bytes`);
        relayed.push(mibps(file.size, got.ms));
      }
    }
  } finally {
    await relay?.stop();
  }
  const mibs = (file.size * scale.transferRepeats) / MiB;
  const perMiB = gatewayFilesPer(cpu.system, mibs);
  const directNote = s3
    ? ` Direct GET (no hop) ${direct.map((v) => fmt(v)).join(', ')} MiB/s, ${cpuPer(cpu.direct, mibs, 'MiB')}: the gateway reaches ${fmt(median(system) / median(direct), 3)} of it, the floor ${fmt(median(relayed) / median(direct), 3)}.`
    : '';
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: relayed.length ? median(relayed) : null,
    metrics: { cpuPerMiB: perMiB },
    notes:
      `${sizeLabel(file.size)}, median of ${scale.transferRepeats} (gateway ${system.map((v) => fmt(v)).join(', ')} MiB/s; ` +
      `baseline: the one-hop floor, a bare Node process piping the S3 GET to HTTP, ${relayed.length ? relayed.map((v) => fmt(v)).join(', ') : 'n/a: no S3 settings'} MiB/s, ${cpuPer(cpu.relay, mibs, 'MiB')}); ` +
      `gateway first byte after ${fmt(median(ttfb))} ms. Gateway path ${cpuPer(cpu.system, mibs, 'MiB')}${gatewayFilesNote(perMiB)}.${directNote}`,
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
  // Warm: first uploads allocate lazily (JIT, pools, part buffers). Its peak is sampled too: the
  // upload of `times` × as many bytes should need no more than it (memory that does not grow with
  // the body), which the single "before" sample, taken at whatever point the collector was, hides.
  const sumRss = () => rss(pids.gateway) + rss(pids.files);
  let warmPeak = sumRss();
  const warmSampler = setInterval(() => (warmPeak = Math.max(warmPeak, sumRss())), 25);
  try {
    const res = await upload(ctx.target.url, user.token, { path: '/files/bench/warm.bin', size: file.size, content: fileRepeated(file.path) });
    if (res.status !== 200) throw new Error(`warm-up upload: HTTP ${res.status}`);
  } finally {
    clearInterval(warmSampler);
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
  await user.call('DELETE', `/v1/agent/files?path=${q('/files/bench/huge.bin')}`);
  await user.call('DELETE', `/v1/agent/files?path=${q('/files/bench/warm.bin')}`);
  const growth = peak.sum - (before.gateway + before.files);
  const m = (b) => fmt(b / MiB);
  return {
    value: growth / MiB,
    unit: 'MiB',
    metrics: { overWarmPeakMiB: (peak.sum - warmPeak) / MiB },
    notes:
      `${sizeLabel(total)} upload at ${fmt(mibps(total, res.ms))} MiB/s (${cpuPer(cpu, total / MiB, 'MiB')}); VmRSS sampled every 25 ms: gateway ${m(before.gateway)} → peak ${m(peak.gateway)} MiB (+${m(peak.gateway - before.gateway)}), ` +
      `files ${m(before.files)} → peak ${m(peak.files)} MiB (+${m(peak.files - before.files)}); value = peak of the sum − sum before. ` +
      `The peak of the sum while a ${sizeLabel(file.size)} warm-up upload ran just before: ${m(warmPeak)} MiB; the ${sizeLabel(total)} upload's is ${m(peak.sum - warmPeak)} MiB above it`,
  };
}
