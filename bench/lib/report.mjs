// Results: one object per scenario, the targets checked against it, JSON and Markdown files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The targets the issues set (issue 7, then the files rewrite). `field` is a key of the
 * scenario's result, `metric` a number the scenario reports beside it (`metrics` of what it
 * returned: CPU per MiB, say). `ratio` is always system ÷ baseline as "higher is better"
 * (throughput ÷ throughput, or baseline latency ÷ system latency), so 1.0 means as fast as the
 * baseline.
 */
export const TARGETS = {
  'agent-get': [
    { field: 'ratio', op: '>=', limit: 0.5 },
    { field: 'p99', op: '<=', limit: 25, unit: 'ms' },
    // Against the design's floor with the contract's I/O (Express + the rate-limit call → grpc-js →
    // a gRPC server reading the stored Agent), same run; the bare floor is in the notes.
    { metric: 'floorRatio', label: 'req/s ÷ floor', op: '>=', limit: 0.85 },
    { metric: 'p99OverFloor', label: 'p99 ÷ floor p99', op: '<=', limit: 1.5 },
    { metric: 'agentsCpu', label: 'agents CPU per GET', op: '<=', limit: 0.2, unit: 'ms' },
  ],
  'agent-patch': [
    // Against the floor with the same Redis work (read, WATCH, reads, MULTI/EXEC), same run.
    { field: 'floorRatio', label: 'req/s ÷ floor', op: '>=', limit: 0.7 },
    { metric: 'agentsCpu', label: 'agents CPU per PATCH', op: '<=', limit: 0.5, unit: 'ms' },
    { metric: 'gatewayCpu', label: 'gateway CPU per PATCH', op: '<=', limit: 0.6, unit: 'ms' },
  ],
  // Routing (two configs, a routingKey per chat) against a plain alias, alternated in the same run.
  'chat-via-routed-alias': [{ field: 'ratio', label: 'ratio to a plain alias', op: '>=', limit: 0.8 }],
  'agents-list-10k': [
    { field: 'p50', label: 'p50 without q', op: '<=', limit: 15, unit: 'ms' },
    { metric: 'qP50', label: 'p50 with q', op: '<=', limit: 15, unit: 'ms' },
  ],
  // Hostile imports (three 16 MiB agent.json of nested brackets at once) make no other user wait and cost the gateway no memory.
  'import-hostile': [
    { field: 'p99', label: "another user's GET p99", op: '<=', limit: 250, unit: 'ms' },
    { metric: 'rssGrowthMiB', label: 'gateway RSS growth', op: '<=', limit: 64, unit: 'MiB' },
    { metric: 'eventLoopLagMaxMs', label: "gateway's longest event-loop delay", op: '<=', limit: 100, unit: 'ms' },
  ],
  // Issue 22: at least half the rate of direct PUTs of the same files, a tail at most twice theirs.
  'upload-small': [
    { field: 'ratio', label: 'ratio to direct PUTs', op: '>=', limit: 0.5 },
    { metric: 'p99OverDirect', label: 'p99 ÷ direct p99', op: '<=', limit: 2 },
    // Issue 26: summarizing text for the content index costs an upload at most 10 %.
    { metric: 'textIndexCost', label: 'extra cost of text (indexed) over binary', op: '<=', limit: 0.1 },
  ],
  'upload-deep': [{ field: 'p50', op: '<=', limit: 50, unit: 'ms' }],
  'upload-256mib': [
    { field: 'ratio', label: 'ratio to direct sequential multipart', op: '>=', limit: 1.2 },
    { metric: 'cpuPerMiB', label: 'CPU gateway+files', op: '<=', limit: 10, unit: 'ms/MiB' },
  ],
  'download-256mib': [
    { field: 'floorRatio', label: 'ratio to the one-hop floor', op: '>=', limit: 0.95 },
    { metric: 'cpuPerMiB', label: 'CPU gateway+files', op: '<=', limit: 5, unit: 'ms/MiB' },
  ],
  'upload-1gib-rss-growth': [{ field: 'value', label: 'growth', op: '<=', limit: 32, unit: 'MiB' }],
  'tus-unfinished-100': [
    { field: 'value', label: 'Redis growth', op: '<=', limit: 1, unit: 'MiB' },
    { metric: 'gatewayRestingGrowthMiB', label: 'gateway RSS growth while uploads rest', op: '<=', limit: 16, unit: 'MiB' },
  ],
  'export-1000-files': [
    { field: 'ratio', label: 'ratio to direct sequential GETs', op: '>=', limit: 0.9 },
    { field: 'p50', label: 'first byte', op: '<=', limit: 200, unit: 'ms' },
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
  'list-folder-100': [{ field: 'p50', op: '<=', limit: 5, unit: 'ms' }],
  'list-10k-files': [{ field: 'p50', op: '<=', limit: 50, unit: 'ms' }],
  // The whole-tree operations against the recursive listing of the same tree, same run.
  'move-10k': [
    { field: 'p50', op: '<=', limit: 500, unit: 'ms' },
    { metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 2 },
  ],
  'restore-10k': [
    { field: 'p50', op: '<=', limit: 500, unit: 'ms' },
    { metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 2 },
  ],
  'checkpoint-10k': [{ metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 1 }],
  'rewind-10k': [{ metric: 'overList', label: 'p50 ÷ list-10k p50', op: '<=', limit: 2 }],
};

/** Latency scenarios: a smaller value is better, so their ratio is baseline ÷ value. */
const LOWER_IS_BETTER = new Set(['ms', 'MiB']);

const round = (n, digits) => (typeof n === 'number' && Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

/** The verdicts of each result scenarioResult made (metrics are not in the JSON, so markdown asks here). */
const verdictsOf = new WeakMap();

/** `a` ÷ `b` as "higher is better" for `unit`, or null. */
function ratioOf(a, b, unit) {
  return a !== null && b !== null && a > 0 && b > 0 ? round(LOWER_IS_BETTER.has(unit) ? b / a : a / b, 3) : null;
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
