// export-1000-files: a project's ZIP export against sequential direct GETs of the same objects,
// and against the floor: one bare process GETting them one after another into a STORED ZIP.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { MiB } from '../lib/config.mjs';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';
import { expectStatus, httpRequest, median, pool, quantile } from '../lib/http.mjs';
import { sharedRelay } from '../lib/relay-server.mjs';
import { over } from '../lib/report.mjs';
import { getObject, putBuffer } from '../lib/s3.mjs';
import { distinctContents, fileNames, uploadMany } from '../lib/seed.mjs';
import { addCpu, fmt, mibps, q, s3Pid, sizeLabel, transferPids } from './files-shared.mjs';

/** Past this many keys in the service's bucket, its objects are not searched for (a real, shared bucket). */
const MAX_BUCKET_KEYS = 50_000;

/** Every key of `bucket` with its size, or undefined when there are more than `max`. */
async function bucketKeys(client, bucket, max) {
  const keys = new Map();
  for await (const item of client.listObjectsV2(bucket, '', true)) {
    if (!item.name) continue;
    if (keys.size >= max) return undefined;
    keys.set(item.name, item.size);
  }
  return keys;
}

/**
 * The objects the seed uploads became, whatever the service's key layout: the keys of its bucket
 * that appeared meanwhile, with the files' size. Undefined when they cannot be told apart (a
 * shared bucket, or a count that does not match).
 */
async function seededObjects(s3, bucket, before, { count, size }) {
  if (!before) return undefined;
  const after = await bucketKeys(s3.client, bucket, MAX_BUCKET_KEYS);
  if (!after) return undefined;
  const keys = [...after].filter(([key, bytes]) => !before.has(key) && bytes === size).map(([key]) => ({ key, size }));
  return keys.length === count ? keys : undefined;
}

export async function export1000(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('export');
  const name = `Bench Export ${randomBytes(3).toString('hex')}`;
  expectStatus(await user.call('POST', '/v1/agent/projects', { name }), 201, 'create the project');
  const fileBytes = Math.floor(scale.exportBytes / scale.exportFiles);
  const s3 = await ctx.baselineS3();
  const serviceBucket = s3 && ctx.target.serviceBucket;
  const before = serviceBucket ? await bucketKeys(s3.client, serviceBucket, MAX_BUCKET_KEYS) : undefined;
  const paths = fileNames(scale.exportFiles, 100, 'bin').map((rel) => `/files/projects/${name}/${rel}`);
  const seed = await uploadMany(ctx, user, paths, { content: distinctContents(fileBytes) });
  // The baseline reads the objects the service stored; failing that, copies of the same sizes
  // put into the bench's bucket.
  let objects;
  let source;
  if (s3) {
    const found = serviceBucket ? await seededObjects(s3, serviceBucket, before, { count: scale.exportFiles, size: fileBytes }) : undefined;
    if (found) {
      objects = { bucket: serviceBucket, keys: found };
      source = "the service's own objects";
    } else {
      const block = randomBytes(fileBytes);
      const keys = paths.map((p) => ({ key: `export-copy${p}`, size: fileBytes }));
      await pool(keys, scale.fileSeedConcurrency, (k) => putBuffer(s3.client, s3.bucket, k.key, block));
      objects = { bucket: s3.bucket, keys };
      source = `objects of the same sizes put into the bench's bucket (the service's own could not be told apart${serviceBucket ? '' : ': its bucket is unknown'})`;
    }
  }
  const payload = objects ? objects.keys.reduce((n, k) => n + k.size, 0) : scale.exportFiles * fileBytes;
  const url = `${ctx.target.url}/v1/agent/projects/export?name=${q(name)}`;
  // The floor (lib/relay-server.mjs, POST /zip): one bare process that GETs the same objects one
  // after another and writes them as a STORED ZIP into its response, entries named as the
  // export's (<project>/<path>): the least an export of objects in the store can do, with no
  // listing (it is given the keys), no authentication and no compressibility probe.
  const relay = objects ? await sharedRelay(ctx) : undefined;
  const floorOrder = objects && JSON.stringify({ bucket: objects.bucket, entries: objects.keys.map(({ key }, i) => ({ key, name: paths[i].slice('/files/projects/'.length) })) });
  // Every entry: a local header (30 bytes) and a central record (46) with its name, its bytes, then the directory's end (22).
  const floorZipBytes = objects ? objects.keys.reduce((n, { size }, i) => n + 76 + 2 * Buffer.byteLength(paths[i].slice('/files/projects/'.length)) + size, 22) : 0;
  const system = [];
  const ttfb = [];
  const direct = [];
  const directTtfb = [];
  const floor = [];
  const floorTtfb = [];
  let zipBytes = 0;
  const exportCpu = {};
  const directCpu = {};
  const floorCpu = {};
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
    if (relay) {
      const relayMeter = cpuMeter({ relay: relay.pid, ...s3Pid(ctx) });
      const got = await httpRequest(`${relay.url}/zip`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: floorOrder, sink: 'count' });
      addCpu(floorCpu, relayMeter());
      if (got.status !== 200 || got.bytes !== floorZipBytes) throw new Error(`floor export: HTTP ${got.status}, ${got.bytes} bytes (expected ${floorZipBytes})`);
      floor.push(mibps(payload, got.ms));
      floorTtfb.push(got.ttfbMs);
    }
  }
  let parallel = '';
  if (objects) {
    const started = performance.now();
    await pool(objects.keys, 8, ({ key }) => getObject(s3.client, objects.bucket, key));
    parallel = `; 8 concurrent direct GETs would reach ${fmt(mibps(payload, performance.now() - started))} MiB/s`;
  }
  const mibs = (payload * scale.exportRepeats) / MiB;
  const floorNote = floor.length
    ? ` Floor: one bare process GETting the same objects one after another into a STORED ZIP (${fmt(floorZipBytes / MiB)} MiB), ${floor.map((v) => fmt(v)).join(', ')} MiB/s, first byte after ${fmt(median(floorTtfb))} ms, ${cpuPer(floorCpu, mibs, 'MiB')}: the export reaches ${fmt(median(system) / median(floor), 3)} of it.`
    : ' No floor: no S3 settings.';
  return {
    value: median(system),
    unit: 'MiB/s',
    baseline: objects ? median(direct) : null,
    floor: floor.length ? median(floor) : null,
    p50: median(ttfb),
    p99: quantile(ttfb, 0.99),
    metrics: { ttfbOverFloor: over(median(ttfb), median(floorTtfb)) },
    cpu: { per: 'MiB', system: cpuPerUnit(exportCpu, mibs), ...(floor.length && { floor: cpuPerUnit(floorCpu, mibs) }), ...(objects && { baseline: cpuPerUnit(directCpu, mibs) }) },
    notes:
      `${paths.length} files, ${fmt(payload / MiB)} MiB (${sizeLabel(fileBytes)} each; uploaded through the gateway at ${scale.fileSeedConcurrency} concurrent, ` +
      `${fmt(paths.length / seed.seconds, 0)}/s, ${fmt(seed.seconds)} s); ZIP ${fmt(zipBytes / MiB)} MiB; MiB/s of file bytes, median of ${scale.exportRepeats} ` +
      `(export ${system.map((v) => fmt(v)).join(', ')}; baseline: sequential direct GETs of ${source ?? 'n/a: no S3 settings'} ${direct.map((v) => fmt(v)).join(', ')})${parallel}. ` +
      `p50/p99 = export time to first byte (ms); direct first object's first byte ${fmt(median(directTtfb))} ms. ` +
      `Export ${cpuPer(exportCpu, mibs, 'MiB')}${objects ? `; direct ${cpuPer(directCpu, mibs, 'MiB')}` : ''}.${floorNote}`,
  };
}
