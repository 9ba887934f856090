// npm run bench: install what is missing, build, then measure the stack (launched here, or the
// one at BENCH_URL) against same-run baselines; results in bench/results (see docs/benchmarks.md).
// BENCH_SCALE=tiny shrinks every scenario; BENCH_ONLY=a,b runs some; BENCH_SKIP_BUILD=1 skips the
// install and build; BENCH_CPU_PROF=gateway,files profiles those processes (floor: the Agent floors); BENCH_RESULTS_DIR moves the output;
// BENCH_OVERRIDES='{"pageFiles":20000}' changes single sizes (the knobs of lib/config.mjs).
import { build, ensureInstalled } from '../scripts/lib.mjs';

if (process.env.BENCH_SKIP_BUILD !== '1') {
  ensureInstalled();
  build();
}
// Imported only now: the bench's own dependencies exist once the install ran.
const { main } = await import('./lib/main.mjs');
process.exitCode = await main();
