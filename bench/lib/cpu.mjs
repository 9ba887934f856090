// CPU time the processes of the stack spend on a piece of work, from /proc/<pid>/stat (Linux),
// and the bench process's own: on a machine of 2 shared cores, the CPU each hop spends per
// request or per MiB is what bounds the throughput, more than any wait.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** USER_HZ: /proc reports CPU time in ticks of 1/100 s on Linux. */
const TICK_MS = 10;

/** User + system CPU time of a process in ms, or undefined when it cannot be read. */
export function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

/**
 * Starts measuring `pids` ({name: pid}) and this process ("bench"); the returned function gives
 * the CPU ms each spent since.
 */
export function cpuMeter(pids = {}) {
  const start = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuMs(pid)]));
  const self = process.cpuUsage();
  return () => {
    const out = {};
    for (const [name, pid] of Object.entries(pids)) {
      const now = processCpuMs(pid);
      if (now !== undefined && start[name] !== undefined) out[name] = now - start[name];
    }
    const used = process.cpuUsage(self);
    out.bench = (used.user + used.system) / 1000;
    return out;
  };
}

/**
 * "CPU per request: gateway 0.41, agents 0.22, bench 0.05 ms" (processes under 2 % of the sum
 * left out: the idle ones).
 */
export function cpuPer(cpu, count, unit) {
  if (!cpu || !count) return '';
  const sum = Object.values(cpu).reduce((a, b) => a + b, 0);
  const parts = Object.entries(cpu)
    .filter(([, ms]) => ms >= 0.02 * sum)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${(ms / count).toFixed(ms / count < 1 ? 3 : 1)}`);
  return `CPU per ${unit}: ${parts.join(', ')} ms`;
}

/**
 * CPU ms per unit of work of each process ({gateway: 0.41, agents: 0.19, …}), for the results'
 * `cpu` field; undefined without a measurement.
 */
export function cpuPerUnit(cpu, count) {
  if (!cpu || !count) return undefined;
  return Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, Number((ms / count).toFixed(3))]));
}

/**
 * Waits until the processes of `pids` together spend less than `share` of one CPU over a window
 * of `windowMs` (at most `maxMs` in all): the work a scenario's setup left behind (events being
 * relayed and consumed, say) done before it measures. Resolves with the ms waited.
 */
export async function settled(pids, { windowMs = 500, share = 0.05, maxMs = 60_000 } = {}) {
  const started = performance.now();
  for (;;) {
    const meter = cpuMeter(pids);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const { bench: _self, ...spent } = meter();
    const total = Object.values(spent).reduce((a, b) => a + b, 0);
    const waited = performance.now() - started;
    if (total < share * windowMs || waited >= maxMs) return waited;
  }
}
