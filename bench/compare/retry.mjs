// Weighs a retry library against a plain loop on the path that matters: a call that succeeds
// at its first attempt (an optimistic Redis transaction that commits, as almost every agent
// PATCH does). Measures ns and bytes allocated per call of
//   direct     `await fn()`, no retry at all (the floor)
//   loop       the plain loop of agent-repo.redis.ts: for (attempt < 50) { r = await fn(); if committed return }
//   cockatiel  retry(handleWhenResult(r => !r.committed), {maxAttempts: 49, backoff: ExponentialBackoff
//              with full jitter}), built once and reused: policy.execute(fn)
//   p-retry    pRetry(fn that throws on a conflict, {retries: 49, minTimeout: 1, maxTimeout: 50, randomize})
// A retry itself is not measured: it waits a backoff of a millisecond or more by design, which
// dwarfs any wrapper.
//
// Run from the repository root (no build needed):
//   node bench/compare/retry.mjs
// Knobs: RETRY_CALLS (200000 per measurement), RETRY_ROUNDS (5).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { ExponentialBackoff, fullJitterGenerator, handleWhenResult, retry } from 'cockatiel';
import pRetry from 'p-retry';

const MAX_ATTEMPTS = 50;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What a WATCH transaction's attempt resolves with. */
const committed = { committed: true, value: 1 };

/** An attempt that commits at once. */
const attempt = async () => committed;

class Conflict extends Error {}

function implementations() {
  // Built once, as a module-level policy would be.
  const policy = retry(handleWhenResult((r) => !r.committed), {
    maxAttempts: MAX_ATTEMPTS - 1,
    backoff: new ExponentialBackoff({ initialDelay: 1, maxDelay: 50, generator: fullJitterGenerator }),
  });
  return {
    direct: async (fn) => (await fn()).value,
    loop: async (fn) => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const r = await fn();
        if (r.committed) return r.value;
        await sleep(Math.random() * Math.min(50, 2 ** attempt));
      }
      throw new Error('too much contention');
    },
    cockatiel: async (fn) => {
      const r = await policy.execute(fn);
      if (!r.committed) throw new Error('too much contention');
      return r.value;
    },
    'p-retry': (fn) =>
      pRetry(
        async () => {
          const r = await fn();
          if (!r.committed) throw new Conflict('conflict');
          return r.value;
        },
        { retries: MAX_ATTEMPTS - 1, minTimeout: 1, maxTimeout: 50, randomize: true },
      ),
  };
}

/** ns per call of `run(fn)` over `calls` sequential calls. */
async function timeOf(run, fn, calls) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await run(fn);
  return Number(process.hrtime.bigint() - t0) / calls;
}

/**
 * Bytes allocated per call, in a child with a young generation large enough that no GC runs
 * during the measurement (checked: the child refuses a result if one did).
 */
function bytesPerCall(name) {
  const out = execFileSync(process.execPath, ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64', fileURLToPath(import.meta.url)], {
    env: { ...process.env, RETRY_CHILD: name },
    encoding: 'utf8',
  });
  return JSON.parse(out).bytes;
}

async function child() {
  const run = implementations()[process.env.RETRY_CHILD];
  const calls = 5_000;
  await timeOf(run, attempt, calls); // warm up (JIT), then measure from a clean heap
  let gcs = 0;
  const obs = new PerformanceObserver((list) => (gcs += list.getEntries().length));
  obs.observe({ entryTypes: ['gc'] });
  globalThis.gc();
  await sleep(10);
  gcs = 0;
  const before = process.memoryUsage().heapUsed;
  await timeOf(run, attempt, calls);
  const after = process.memoryUsage().heapUsed;
  await sleep(10);
  obs.disconnect();
  process.stdout.write(JSON.stringify({ bytes: gcs === 0 ? (after - before) / calls : null }));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length / 2;
  return Number.isInteger(m) ? (s[m - 1] + s[m]) / 2 : s[Math.floor(m)];
};

async function main() {
  const calls = Number(process.env.RETRY_CALLS ?? 200_000);
  const rounds = Number(process.env.RETRY_ROUNDS ?? 5);
  console.log(`retry wrappers: ${calls} sequential calls per measurement, ${rounds} rounds (order rotated), Node ${process.version}\n`);
  const impls = implementations();
  const names = Object.keys(impls);
  const ns = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) await timeOf(impls[name], attempt, calls / 10); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length];
      ns[name].push(await timeOf(impls[name], attempt, calls));
    }
  }
  console.log('An attempt that commits at once (the hot path):');
  console.log('| wrapper | ns/call median (min–max) | over direct | bytes/call |');
  console.log('|---|---|---|---|');
  const floor = median(ns.direct);
  for (const name of names) {
    const bytes = bytesPerCall(name);
    const extra = name === 'direct' ? '—' : `${median(ns[name]) - floor >= 0 ? '+' : ''}${(median(ns[name]) - floor).toFixed(0)} ns`;
    console.log(`| ${name} | ${median(ns[name]).toFixed(0)} (${Math.min(...ns[name]).toFixed(0)}–${Math.max(...ns[name]).toFixed(0)}) | ${extra} | ${bytes === null ? 'n/a (a GC ran)' : bytes.toFixed(0)} |`);
  }
}

if (process.env.RETRY_CHILD) await child();
else await main();
