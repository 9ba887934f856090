// The benchmark run: open the target, run the scenarios in order, write the results.
import { performance } from 'node:perf_hooks';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { cpus, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaleFromEnv, selectedScenarios } from './config.mjs';
import { apiClient } from './http.mjs';
import { failedResult, scenarioResult, writeReport } from './report.mjs';
import { ensureBucket, listKeys, s3Client } from './s3.mjs';
import { openTarget } from './target.mjs';
import { calibrate } from './calibration.mjs';
import { openSlowlog } from './redis-slowlog.mjs';
import { agentGet, agentsList10k } from '../scenarios/agents.mjs';
import { agentPatch } from '../scenarios/agents-patch.mjs';
import { chatViaRoutedAlias } from '../scenarios/agents-chat.mjs';
import { importHostile } from '../scenarios/agents-import.mjs';
import { tusUnfinished100 } from '../scenarios/files-tus.mjs';
import { search10k } from '../scenarios/files-search.mjs';
import { noisyNeighbour } from '../scenarios/noisy-neighbour.mjs';
import { mcpEdit, mcpRead } from '../scenarios/mcp.mjs';
import { checkpoint10k, download256, export1000, list10k, listFolder100, listPage, move10k, restore10k, rewind10k, upload256, uploadDeep, uploadRssGrowth, uploadSmall } from '../scenarios/files.mjs';

const SCENARIOS = {
  'agent-get': agentGet,
  'agent-patch': agentPatch,
  'chat-via-routed-alias': chatViaRoutedAlias,
  'agents-list-10k': agentsList10k,
  'import-hostile': importHostile,
  'upload-small': uploadSmall,
  'upload-deep': uploadDeep,
  'upload-256mib': upload256,
  'download-256mib': download256,
  'upload-1gib-rss-growth': uploadRssGrowth,
  'tus-unfinished-100': tusUnfinished100,
  'export-1000-files': export1000,
  'mcp-read': mcpRead,
  'mcp-edit': mcpEdit,
  'list-folder-100': listFolder100,
  'list-10k-files': list10k,
  'move-10k': move10k,
  'restore-10k': restore10k,
  'checkpoint-10k': checkpoint10k,
  'rewind-10k': rewind10k,
  'list-page-1000-of-100k': listPage,
  'search-10k': search10k,
  'noisy-neighbour': noisyNeighbour,
};

export const DEFAULT_RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** `size` pseudo-random bytes in a temporary file, written in 1 MiB blocks; its SHA-256 too. */
async function writeTransferFile(dir, size) {
  const path = join(dir, `transfer-${size}.bin`);
  const out = createWriteStream(path);
  const hash = createHash('sha256');
  const block = randomBytes(1024 * 1024);
  for (let written = 0, i = 0; written < size; i++) {
    const n = Math.min(block.length, size - written);
    const chunk = Buffer.from(block.subarray(0, n));
    if (n >= 4) chunk.writeUInt32BE(i, 0); // no two blocks alike
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
    written += n;
  }
  out.end();
  await once(out, 'finish');
  return { path, size, sha256: hash.digest('hex') };
}

function createContext(target, scale, tmp) {
  const problems = [];
  let transferFile;
  let baseline;
  let slowlog;
  const cleanups = [];
  return {
    target,
    scale,
    problems,
    shared: {},
    problem: (scenario, message) => problems.push(`${scenario}: ${message}`),
    async newUser(label) {
      const sub = `bench-${label}-${randomUUID()}`;
      const token = await target.token(sub);
      return { sub, token, call: apiClient(target.url, token) };
    },
    transferFile() {
      transferFile ??= writeTransferFile(tmp, scale.transferBytes);
      return transferFile;
    },
    /** A bucket of the bench's own on the service's S3 server, or undefined without S3 settings. */
    baselineS3() {
      if (!target.s3) return Promise.resolve(undefined);
      baseline ??= (async () => {
        const client = s3Client(target.s3);
        const bucket = `bench-${randomBytes(6).toString('hex')}`;
        await ensureBucket(client, bucket, target.s3.region);
        return { client, bucket };
      })();
      return baseline;
    },
    /** Runs `f` when the run ends (a floor process a scenario started, say), before the stack stops. */
    onCleanup: (f) => cleanups.push(f),
    /** Redis's SLOWLOG (lib/redis-slowlog.mjs), or undefined. */
    slowlog() {
      slowlog ??= openSlowlog(target.redisUrl);
      return slowlog;
    },
    async cleanup() {
      for (const f of cleanups.splice(0)) await f();
      await rm(tmp, { recursive: true, force: true });
      await (await slowlog)?.close();
      if (!baseline) return;
      const { client, bucket } = await baseline;
      const keys = await listKeys(client, bucket, '');
      for (let i = 0; i < keys.length; i += 1000) await client.removeObjects(bucket, keys.slice(i, i + 1000).map((k) => k.key));
      await client.removeBucket(bucket);
    },
  };
}

/** Runs the benchmark; resolves with the exit code (1 when a scenario failed or an invariant broke). */
export async function main(env = process.env) {
  const scale = scaleFromEnv(env);
  const names = selectedScenarios(env);
  const resultsDir = resolve(env.BENCH_RESULTS_DIR ?? DEFAULT_RESULTS_DIR);
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  console.log(`› bench (scale ${scale.name}): ${names.join(', ')}`);
  const target = await openTarget({ env, resultsDir });
  console.log(`› target: ${target.mode === 'launched' ? `a stack launched at ${target.url} (backends: ${JSON.stringify(target.sources)})` : target.url}`);
  // Measured before the scenarios, while the stack is idle: how fast this machine is today.
  const calibration = await calibrate({ redisUrl: target.redisUrl, scale });
  console.log(`› calibration: ${JSON.stringify(calibration)}`);
  const tmp = await mkdtemp(join(tmpdir(), 'bench-'));
  const ctx = createContext(target, scale, tmp);
  const scenarios = [];
  let failed = false;
  try {
    for (const name of names) {
      const started = performance.now();
      process.stdout.write(`› ${name} … `);
      let result;
      try {
        result = scenarioResult(name, await SCENARIOS[name](ctx));
      } catch (err) {
        failed = true;
        result = failedResult(name, err);
      }
      scenarios.push(result);
      const took = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`${result.value ?? 'FAILED'} ${result.unit ?? ''}${result.ratio !== null ? ` (ratio ${result.ratio})` : ''} [${took} s]\n    ${result.notes}`);
    }
  } finally {
    await ctx.cleanup().catch((err) => console.error(`cleanup: ${err.message}`));
    await target.stop();
  }
  const report = {
    startedAt,
    machine: { cpus: cpus().length, node: process.version },
    calibration,
    scale: scale.name,
    target: target.mode === 'launched' ? 'launched stack' : 'given stack',
    ...(env.BENCH_SERVICE_ENV ? { serviceEnv: JSON.parse(env.BENCH_SERVICE_ENV) } : {}),
    durationS: Math.round((performance.now() - t0) / 1000),
    scenarios,
  };
  const paths = writeReport(resultsDir, report);
  console.log(`\n› results: ${Object.values(paths).map((p) => relative(process.cwd(), p)).join(', ')} (${report.durationS} s)`);
  for (const p of ctx.problems) console.error(`✗ ${p}`);
  return failed || ctx.problems.length > 0 ? 1 : 0;
}
