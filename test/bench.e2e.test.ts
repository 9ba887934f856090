import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

/**
 * The benchmark (`npm run bench`) at BENCH_SCALE=tiny, end to end: it launches its own stack on
 * the tests' backends, runs every scenario and writes its results, so the harness cannot rot.
 * Numbers are not judged here (a tiny run on a busy machine says nothing); their presence is.
 */
const RUN = fileURLToPath(new URL('../bench/run.mjs', import.meta.url));

const SCENARIOS = [
  'agent-get',
  'agent-patch',
  'chat-via-routed-alias',
  'agents-list-10k',
  'import-hostile',
  'upload-small',
  'upload-deep',
  'upload-256mib',
  'download-256mib',
  'upload-1gib-rss-growth',
  'tus-unfinished-100',
  'export-1000-files',
  'mcp-read',
  'mcp-edit',
  'list-folder-100',
  'list-10k-files',
  'move-10k',
  'restore-10k',
  'checkpoint-10k',
  'rewind-10k',
  'list-page-1000-of-100k',
  'search-10k',
  'noisy-neighbour',
];
/** Scenarios measured against a same-run baseline (the stack here has S3 settings, so all of them). */
const MEMORY = ['upload-1gib-rss-growth', 'tus-unfinished-100'];
const WITH_BASELINE = SCENARIOS.filter((s) => !MEMORY.includes(s));
const WITH_PERCENTILES = SCENARIOS.filter((s) => !['upload-256mib', 'download-256mib', ...MEMORY].includes(s));

function runBench(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

const infra = inject('infra');

describe('bench — smoke', () => {
  it.skipIf(infra.topology === 'scaled')('npm run bench at BENCH_SCALE=tiny runs every scenario and writes JSON and Markdown results', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bench-smoke-'));
    try {
      // The caller's BENCH_* settings (a URL, a subset) must not leak in.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.startsWith('BENCH_') && v !== undefined)) as Record<string, string>;
      const { code, output } = await runBench({
        ...env,
        BENCH_SCALE: 'tiny',
        BENCH_SKIP_BUILD: '1',
        BENCH_RESULTS_DIR: dir,
        REDIS_URL: infra.redisUrl,
        NATS_URL: infra.natsUrl,
        S3_ENDPOINT: infra.s3.endpoint,
        S3_ACCESS_KEY: infra.s3.accessKey,
        S3_SECRET_KEY: infra.s3.secretKey,
        S3_REGION: infra.s3.region,
      });
      expect(code, output).toBe(0);

      const report = JSON.parse(await readFile(join(dir, 'latest.json'), 'utf8'));
      expect(report).toMatchObject({ startedAt: expect.any(String), machine: { cpus: expect.any(Number), node: process.version } });
      // How fast the machine was: what makes runs of other days readable.
      expect(report.calibration).toMatchObject({ kernel: expect.any(String), cpuModel: expect.any(String), node: process.version });
      expect(report.calibration.ioredisMicrosPerCommand).toBeGreaterThan(0);
      expect(report.calibration.bareExpressReqPerS).toBeGreaterThan(0);
      expect(new Date(report.startedAt).toISOString()).toBe(report.startedAt);
      expect(report.scenarios.map((s: { scenario: string }) => s.scenario)).toEqual(SCENARIOS);
      for (const s of report.scenarios) {
        expect(Object.keys(s).sort(), s.scenario).toEqual(['baseline', 'cpu', 'floor', 'floorRatio', 'notes', 'p50', 'p99', 'ratio', 'scenario', 'unit', 'value']);
        // A growth of memory may be nothing, or less than nothing (memory given back meanwhile).
        expect(Number.isFinite(s.value) && (s.value > 0 || MEMORY.includes(s.scenario)), `${s.scenario}: ${s.notes}`).toBe(true);
        expect(s.unit, s.scenario).toEqual(expect.any(String));
        expect(s.notes, s.scenario).toEqual(expect.any(String));
        // Every scenario is held to its floor too (docs/benchmarks.md#floors-and-cpu-per-request); a
        // memory floor may round to nothing at this scale.
        expect(Number.isFinite(s.floor) && (s.floor > 0 || MEMORY.includes(s.scenario)), `${s.scenario}: ${s.notes}`).toBe(true);
        if (WITH_BASELINE.includes(s.scenario)) {
          expect(s.baseline, `${s.scenario}: ${s.notes}`).toBeGreaterThan(0);
          expect(s.ratio, `${s.scenario}: ${s.notes}`).toBeGreaterThan(0);
        }
        if (WITH_PERCENTILES.includes(s.scenario)) {
          expect(s.p50, s.scenario).toBeGreaterThan(0);
          expect(s.p99, s.scenario).toBeGreaterThanOrEqual(s.p50);
        }
      }
      const byName = (name: string) => report.scenarios.find((s: { scenario: string }) => s.scenario === name);
      const patch = byName('agent-patch');
      // One winner per contended round, through the gateway and through the floor alike.
      expect(patch.notes).toMatch(/invariant holds.*floor contended: .*invariant holds/);
      // The Agent scenarios: CPU per request of each process, and the floors (with the contract's Redis calls) beside the baselines.
      const get = byName('agent-get');
      for (const s of [get, patch]) {
        expect(s.floor, s.scenario).toBeGreaterThan(0);
        expect(s.floorRatio, s.scenario).toBeGreaterThan(0);
        expect(s.cpu.system, s.scenario).toMatchObject({ gateway: expect.any(Number), agents: expect.any(Number) });
        expect(s.cpu.floor, s.scenario).toMatchObject({ 'floor-http': expect.any(Number), 'floor-grpc': expect.any(Number) });
      }
      expect(get.notes).toMatch(/bare floor .* req\/s.*floor with the I\/O .* req\/s/);
      expect(byName('chat-via-routed-alias').notes).toMatch(/through a plain alias/);
      // The whole-tree operations are each held to the listing of the same tree.
      for (const name of ['move-10k', 'restore-10k', 'checkpoint-10k', 'rewind-10k']) expect(byName(name).notes, name).toMatch(/p50 ÷ list-10k p50 ≤ \d (met|MISSED)/);
      // MCP against plain HTTP: every answer and every edited file checked, CPU per call of each side.
      expect(byName('mcp-read').notes).toMatch(/every answer checked.*Baseline: GET \/v1\/agent\/files\/read.*files\/download of it.*official SDK's client/);
      expect(byName('mcp-edit').notes).toMatch(/every file's final content \(\d+ edits in all/);
      for (const name of ['mcp-read', 'mcp-edit']) expect(byName(name).cpu.system, name).toMatchObject({ gateway: expect.any(Number), files: expect.any(Number) });

      // The dated copy and the Markdown table.
      const dated = readdirSync(dir).filter((f) => /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/.test(f));
      expect(dated).toHaveLength(1);
      expect(JSON.parse(await readFile(join(dir, dated[0]!), 'utf8'))).toEqual(report);
      expect(existsSync(join(dir, 'latest.md'))).toBe(true);
      const markdown = await readFile(join(dir, 'latest.md'), 'utf8');
      expect(markdown).toMatch(/^\| scenario \| value \| unit \| baseline \| ratio \| p50 \| p99 \|/m);
      for (const name of SCENARIOS) expect(markdown).toContain(`| ${name} |`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // ~60 s on a quiet machine of 2 CPUs; three times that while other suites load it.
  }, 300_000);
});
