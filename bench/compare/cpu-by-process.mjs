// Where a command's CPU goes, by kind of process: runs the command, reads every process's
// user+system time from /proc once a second while it runs, and prints the CPU seconds each kind
// spent (a service by its dist/main.js, vitest, Redis, NATS, s3rver, Ceph, tsc, the rest), what
// the machine was busy with meanwhile, and, per service, how many processes started and the CPU
// they spent in their first three seconds (loading their code).
//
//   node bench/compare/cpu-by-process.mjs -- npm test
//
// Linux only. Processes that live less than a second may be missed; a process that exits is
// counted up to its last sample. Processes that were running before the command are counted
// from the start, not for their whole life.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const args = process.argv.slice(process.argv.indexOf('--') + 1);
if (process.argv.indexOf('--') < 0 || args.length === 0) {
  console.error('usage: node bench/compare/cpu-by-process.mjs -- <command> [args…]');
  process.exit(2);
}
const HZ = 100;
const SAMPLE_MS = 1_000;

/** A name for the kind of process a command line is. */
function kindOf(cmd) {
  const service = /services\/(\w+)\/dist\/main\.js/.exec(cmd);
  if (service) return service[1];
  if (/vitest/.test(cmd)) return 'vitest';
  if (/redis-server/.test(cmd)) return 'redis';
  if (/nats-server/.test(cmd)) return 'nats';
  if (/s3rver/.test(cmd)) return 's3rver';
  if (/radosgw|ceph-/.test(cmd)) return 'ceph';
  if (/\btsc\b/.test(cmd)) return 'tsc';
  if (/eslint/.test(cmd)) return 'eslint';
  if (/chrom/.test(cmd)) return 'chromium';
  if (/bench\//.test(cmd)) return 'bench';
  return 'other';
}

/** pid:starttime → { kind, ticks, born (ms), atThree (ticks by 3 s of life) }. */
const seen = new Map();
const totals = new Map();
const started = new Map();
let first = true;
let samples = 0;

function sample() {
  const now = Date.now();
  const alive = new Set();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let stat, cmd;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const key = `${pid}:${fields[19]}`;
    alive.add(key);
    let p = seen.get(key);
    if (!p) {
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        continue;
      }
      // Running before the command: counted from now. Started since: counted from its birth.
      p = { kind: kindOf(cmd), ticks: first ? ticks : 0, born: now, atThree: undefined, before: first };
      seen.set(key, p);
      if (!first) started.set(p.kind, (started.get(p.kind) ?? 0) + 1);
    }
    const delta = ticks - p.ticks;
    p.ticks = ticks;
    if (delta > 0) totals.set(p.kind, (totals.get(p.kind) ?? 0) + delta / HZ);
    if (!p.before && p.atThree === undefined && now - p.born >= 3_000) p.atThree = ticks;
  }
  for (const key of seen.keys()) if (!alive.has(key)) seen.delete(key);
  first = false;
  samples++;
}

const loading = new Map();
function noteLoading() {
  for (const p of seen.values()) if (!p.before && p.atThree !== undefined && !p.noted) {
    p.noted = true;
    loading.set(p.kind, (loading.get(p.kind) ?? 0) + p.atThree / HZ);
  }
}

sample();
const began = Date.now();
const timer = setInterval(() => (sample(), noteLoading()), SAMPLE_MS);
const child = spawn(args[0], args.slice(1), { stdio: 'inherit' });
child.on('exit', (code, signal) => {
  clearInterval(timer);
  sample();
  noteLoading();
  const seconds = (Date.now() - began) / 1000;
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  console.log(`\ncpu-by-process: ${seconds.toFixed(0)} s, ${all.toFixed(0)} CPU s (${(all / seconds).toFixed(2)} CPUs busy on average), ${samples} samples`);
  console.log('kind'.padEnd(12), 'CPU s'.padStart(8), 'started'.padStart(8), 'CPU s in first 3 s'.padStart(20));
  for (const [kind, cpu] of [...totals].sort((a, b) => b[1] - a[1])) {
    console.log(kind.padEnd(12), cpu.toFixed(1).padStart(8), String(started.get(kind) ?? 0).padStart(8), (loading.has(kind) ? loading.get(kind).toFixed(1) : '').padStart(20));
  }
  process.exit(code ?? (signal ? 1 : 0));
});
