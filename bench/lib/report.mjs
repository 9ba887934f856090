// Results: one object per scenario, the targets checked against it, JSON and Markdown files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The targets, every one a ratio measured in the same run, so that a verdict means the same on a
 * fast day and a slow one (this kind of machine varies ~3× in CPU per request between days).
 * `field` is a key of the scenario's result, `metric` a number the scenario reports beside it
 * (`metrics` of what it returned). `ratio` is system ÷ baseline and `floorRatio` system ÷ floor,
 * both as "higher is better" (throughput ÷ throughput, or the other's latency ÷ the system's), so
 * 1.0 means as fast as the baseline or the floor; the `…Over…` metrics are system ÷ reference as
 * "lower is better" (CPU, latency). The floor is the least work any implementation of this design
 * must do (the same Redis, S3 and gRPC calls from bare processes; docs/benchmarks.md). Where a
 * limit follows from another, it says so: a CPU-bound service at ≥ k × its floor's rate spends at
 * most 1/k of the floor's CPU per request. Memory bounds stay in MiB: a byte count does not change
 * with the day's CPU speed, and each is stated for a fixed amount of data sent.
 */
export const TARGETS = {
  'agent-get': [
    { field: 'ratio', label: 'req/s ÷ bare Express', op: '>=', limit: 0.5 },
    // Against the design's floor with the contract's I/O (Express + the rate-limit call → grpc-js →
    // a gRPC server reading the stored Agent), same run; the bare floor is in the notes.
    { metric: 'floorRatio', label: 'req/s ÷ floor', op: '>=', limit: 0.85 },
    { metric: 'p99OverFloor', label: 'p99 ÷ floor p99', op: '<=', limit: 1.5 },
    // 1 / 0.85: the rate target, as CPU of the gRPC side.
    { metric: 'agentsCpuOverFloor', label: "agents CPU per GET ÷ the floor gRPC server's", op: '<=', limit: 1.2 },
  ],
  'agent-patch': [
    // Against the floor with the same Redis work (read, WATCH, reads, MULTI/EXEC), same run.
    { field: 'floorRatio', label: 'req/s ÷ floor', op: '>=', limit: 0.7 },
    // 1 / 0.7, for each of the two processes.
    { metric: 'agentsCpuOverFloor', label: "agents CPU per PATCH ÷ the floor gRPC server's", op: '<=', limit: 1.4 },
    { metric: 'gatewayCpuOverFloor', label: "gateway CPU per PATCH ÷ the floor HTTP process's", op: '<=', limit: 1.4 },
  ],
  // Routing (two configs, a routingKey per chat) against a plain alias, alternated in the same run.
  'chat-via-routed-alias': [{ field: 'ratio', label: 'ratio to a plain alias', op: '>=', limit: 0.8 }],
  // A page of 10,000 Agents, with and without q, at most twice the floor's page (one process
  // reading the same hashes and schedule summaries); both had the same limit before, as here.
  'agents-list-10k': [
    { field: 'floorRatio', label: 'floor p50 ÷ p50 without q', op: '>=', limit: 0.5 },
    { metric: 'qOverFloor', label: 'p50 with q ÷ floor p50', op: '<=', limit: 2 },
  ],
  // Hostile imports (three 16 MiB agent.json of nested brackets at once) make no other user wait
  // and cost the gateway no memory: another user's p99 at most 5 × its p99 with nothing else
  // running, the gateway's longest event-loop delay at most 10 × that quiet p99.
  'import-hostile': [
    { field: 'ratio', label: "another user's quiet p99 ÷ p99 under attack", op: '>=', limit: 0.2 },
    { metric: 'rssGrowthMiB', label: 'gateway RSS growth', op: '<=', limit: 64, unit: 'MiB' },
    { metric: 'lagOverQuietP99', label: "gateway's longest event-loop delay ÷ quiet p99", op: '<=', limit: 10 },
  ],
  // Issue 22: at least half the rate of direct PUTs of the same files, a tail at most twice theirs.
  'upload-small': [
    { field: 'ratio', label: 'ratio to direct PUTs', op: '>=', limit: 0.5 },
    { metric: 'p99OverDirect', label: 'p99 ÷ direct p99', op: '<=', limit: 2 },
    // Issue 26: summarizing text for the content index costs an upload at most 10 %.
    { metric: 'textIndexCost', label: 'extra cost of text (indexed) over binary', op: '<=', limit: 0.1 },
  ],
  // A file at the end of a new chain of folders (200 at full scale) at most twice the same file
  // one level down (the baseline): the path's new folders are checked and indexed one by one.
  'upload-deep': [{ field: 'ratio', label: 'flat p50 ÷ deep p50', op: '>=', limit: 0.5 }],
  // The gateway and the files service together at most twice the CPU per MiB of the floor's one
  // relay process (its work on the bytes is the gateway's: busboy, SHA-256, the part PUTs).
  'upload-256mib': [
    { field: 'ratio', label: 'ratio to direct sequential multipart', op: '>=', limit: 1.2 },
    { metric: 'cpuOverFloor', label: "CPU gateway+files per MiB ÷ the relay's", op: '<=', limit: 2 },
  ],
  'download-256mib': [
    { field: 'floorRatio', label: 'ratio to the one-hop floor', op: '>=', limit: 0.95 },
    { metric: 'cpuOverFloor', label: "CPU gateway+files per MiB ÷ the relay's", op: '<=', limit: 2 },
  ],
  'upload-1gib-rss-growth': [{ field: 'value', label: 'growth for 1 GiB sent', op: '<=', limit: 32, unit: 'MiB' }],
  'tus-unfinished-100': [
    { field: 'value', label: 'Redis growth for 100 uploads', op: '<=', limit: 1, unit: 'MiB' },
    { metric: 'gatewayRestingGrowthMiB', label: 'gateway RSS growth while uploads rest', op: '<=', limit: 16, unit: 'MiB' },
  ],
  'export-1000-files': [
    { field: 'ratio', label: 'ratio to direct sequential GETs', op: '>=', limit: 0.9 },
    { metric: 'ttfbOverFloor', label: "first byte ÷ the floor's", op: '<=', limit: 2 },
  ],
  // Issue 26: each query's p50 against a parallel scan of the store in the same run, the literal
  // beside grep -rF on local disk (a goal), and the index's memory against the bound
  // docs/operations.md#search-index states for source-like text.
  'search-10k': [
    { metric: 'literalOverScan', label: 'literal p50 ÷ scan p50', op: '<=', limit: 0.1 },
    { metric: 'regexOverScan', label: 'regex p50 ÷ scan p50', op: '<=', limit: 0.1 },
    { metric: 'literalOverGrep', label: 'literal p50 ÷ grep -rF p50 (goal)', op: '<=', limit: 3 },
    { metric: 'indexKiBPerMB', label: 'index memory per MB of text', op: '<=', limit: 256, unit: 'KiB' },
  ],
  // read_text_file from 32 sessions against the download route at 32 concurrent, same run.
  'mcp-read': [{ field: 'ratio', label: 'ratio to the HTTP read route (files/read)', op: '>=', limit: 0.8 }],
  // edit_file against a download plus an upload of the whole file (If-Match), alternated.
  'mcp-edit': [{ metric: 'overBaseline', label: 'p50 ÷ download+upload p50', op: '<=', limit: 2 }],
  // Listings at most twice their floor: one process sending the same sorted set as the same JSON.
  'list-folder-100': [{ field: 'floorRatio', label: 'floor p50 ÷ p50', op: '>=', limit: 0.5 }],
  'list-10k-files': [{ field: 'floorRatio', label: 'floor p50 ÷ p50', op: '>=', limit: 0.5 }],
  // The whole-tree operations against the recursive listing of the same tree, same run.
  'move-10k': [{ metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 2 }],
  'restore-10k': [{ metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 2 }],
  'checkpoint-10k': [{ metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 1 }],
  'rewind-10k': [{ metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 2 }],
  // Issue 40: while one user runs the worst accepted search, a tree operation at the bound and MCP
  // sessions that never read, another user's p99 at most twice its p99 with nothing else running
  // (in turns, same run), no 5xx, no Redis step of a second, and the gateway's RSS bounded.
  'noisy-neighbour': [
    { metric: 'searchP99OverQuiet', label: 'p99 beside the worst search ÷ quiet p99', op: '<=', limit: 2 },
    { metric: 'treeP99OverQuiet', label: 'p99 beside a tree move at the bound ÷ quiet p99', op: '<=', limit: 2 },
    { metric: 'mcpP99OverQuiet', label: 'p99 beside MCP sessions that never read ÷ quiet p99', op: '<=', limit: 2 },
    { metric: 'fivexx', label: 'answers ≥ 500', op: '<=', limit: 0 },
    { metric: 'longestRedisStepMs', label: 'longest Redis step', op: '<=', limit: 1000, unit: 'ms' },
    { metric: 'gatewayRssPeakMiB', label: 'gateway RSS peak', op: '<=', limit: 512, unit: 'MiB' },
  ],
};

/** `a` ÷ `b` when both are positive numbers (a metric of system ÷ reference), else undefined. */
export function over(a, b) {
  return typeof a === 'number' && typeof b === 'number' && a > 0 && b > 0 ? a / b : undefined;
}

/** Latency scenarios: a smaller value is better, so their ratio is baseline ÷ value. */
const LOWER_IS_BETTER = new Set(['ms', 'MiB']);

const round = (n, digits) => (typeof n === 'number' && Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

/** The verdicts of each result scenarioResult made (metrics are not in the JSON, so markdown asks here). */
const verdictsOf = new WeakMap();

/** `a` ÷ `b` as "higher is better" for `unit`, or null. */
function ratioOf(a, b, unit) {
  return round(LOWER_IS_BETTER.has(unit) ? over(b, a) : over(a, b), 3);
}

/**
 * The result object of the JSON file (exactly these keys), from what a scenario returned.
 * `floor` is the design's floor measured in the same run (agent-get and agent-patch: the two
 * processes, the gRPC hop and the contract's Redis calls, nothing else; see floor-server.mjs),
 * with `floorRatio` = system ÷ floor like `ratio`; `cpu` is the
 * CPU ms each process spent per unit of work ({per, system, floor?, baseline?, …}); null where
 * a scenario has none (its notes may still say).
 */
export function scenarioResult(scenario, out) {
  const value = round(out.value, 2);
  const baseline = round(out.baseline ?? null, 2);
  const floor = round(out.floor ?? null, 2);
  const ratio = ratioOf(value, baseline, out.unit);
  const result = {
    scenario,
    value,
    unit: out.unit ?? null,
    baseline,
    ratio,
    floor,
    floorRatio: ratioOf(value, floor, out.unit),
    p50: round(out.p50 ?? null, 2),
    p99: round(out.p99 ?? null, 2),
    cpu: out.cpu ?? null,
    notes: out.notes ?? '',
  };
  const verdicts = checkTargets(result, out.metrics);
  if (verdicts.length) result.notes += `${result.notes ? ' ' : ''}Targets: ${verdicts.map((v) => v.text).join('; ')}.`;
  verdictsOf.set(result, verdicts);
  return result;
}

export function failedResult(scenario, err) {
  return { scenario, value: null, unit: null, baseline: null, ratio: null, floor: null, floorRatio: null, p50: null, p99: null, cpu: null, notes: `FAILED: ${err instanceof Error ? err.message : String(err)}` };
}

/** "gateway 0.42, agents 0.19" of one `cpu` entry. */
function cpuText(perProcess) {
  return perProcess ? Object.entries(perProcess).map(([name, ms]) => `${name} ${ms}`).join(', ') : null;
}

/** Each target of the scenario: met or missed, with the measured number. */
export function checkTargets(result, metrics = {}) {
  return (TARGETS[result.scenario] ?? []).map((t) => {
    const actual = t.metric ? round(metrics?.[t.metric] ?? null, 2) : result[t.field];
    const met = typeof actual === 'number' ? (t.op === '>=' ? actual >= t.limit : actual <= t.limit) : null;
    const unit = t.unit ? ` ${t.unit}` : '';
    const mark = met === null ? '? (no number)' : met ? `met (${actual}${unit})` : `MISSED (${actual}${unit})`;
    return { met, text: `${t.label ?? t.field ?? t.metric} ${t.op === '>=' ? '≥' : '≤'} ${t.limit}${unit} ${mark}` };
  });
}

const cell = (v) => (v === null || v === undefined ? '–' : String(v).replace(/\|/g, '\\|').replace(/\n/g, ' '));

export function markdown(report) {
  const lines = [
    `# Benchmark ${report.startedAt}`,
    '',
    `Scale \`${report.scale}\`, ${report.target}, ${report.machine.cpus} CPUs, Node ${report.machine.node}, ${report.durationS} s in all. ` +
      'ratio = system ÷ same-run baseline, higher is better (for latencies: baseline latency ÷ system latency).',
    '',
    ...(report.calibration
      ? [
          `Calibration (read other runs' figures against these): kernel ${report.calibration.kernel}, ${report.calibration.cpuModel}; ` +
            `ioredis ${report.calibration.ioredisMicrosPerCommand ?? 'n/a'} µs of client CPU per command; bare Express ${report.calibration.bareExpressReqPerS} req/s.`,
          '',
        ]
      : []),
    '| scenario | value | unit | baseline | ratio | p50 | p99 | floor | ÷ floor | CPU ms per unit (system; floor) | targets | notes |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|',
  ];
  for (const r of report.scenarios) {
    const verdicts = verdictsOf.get(r) ?? checkTargets(r);
    const targets = verdicts.length ? verdicts.map((v) => (v.met === null ? '?' : v.met ? '✅' : '❌')).join(' ') : '–';
    const notes = r.notes.replace(/ Targets: .*$/, '');
    const cpu = r.cpu ? [`${r.cpu.per}: ${cpuText(r.cpu.system) ?? '–'}`, cpuText(r.cpu.floor)].filter(Boolean).join('; ') : null;
    lines.push(`| ${cell(r.scenario)} | ${cell(r.value)} | ${cell(r.unit)} | ${cell(r.baseline)} | ${cell(r.ratio)} | ${cell(r.p50)} | ${cell(r.p99)} | ${cell(r.floor)} | ${cell(r.floorRatio)} | ${cell(cpu)} | ${targets} ${cell(verdicts.map((v) => v.text).join('; '))} | ${cell(notes)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Writes latest.json, <date>.json and latest.md into `dir`; returns their paths. */
export function writeReport(dir, report) {
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const dated = `${report.startedAt.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}.json`;
  const paths = { latest: join(dir, 'latest.json'), dated: join(dir, dated), markdown: join(dir, 'latest.md') };
  writeFileSync(paths.latest, json);
  writeFileSync(paths.dated, json);
  writeFileSync(paths.markdown, markdown(report));
  return paths;
}
