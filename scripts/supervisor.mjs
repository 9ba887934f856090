// Keeps a set of child processes running, as a Kubernetes Deployment keeps its pods: one that
// exits on its own is started again after an exponential backoff; stop() ends them all in reverse
// start order. Used by `npm start` (scripts/start.mjs); tested by test/supervisor.unit.test.ts.
//
// No orphans, whichever way this process ends:
// - each child runs in its own session (`detached`), so a Ctrl-C in the terminal reaches only this
//   process, which stops the children one by one, newest first (dependents before what they use);
// - on Linux each child is started through `setpriv --pdeathsig SIGKILL` (util-linux), so that the
//   kernel kills it when this process dies, even by SIGKILL, which no handler here sees. SIGKILL,
//   not SIGTERM: the kernel sends the signal again each time one of Node's threads exits (the
//   child is handed from thread to thread), and our services, s3rver and Redis take a second
//   SIGTERM as "exit now" anyway. They are built to survive a kill (AOF, the files crash suite);
// - on any exit this process still sees (an uncaught error, process.exit), the children that are
//   left get SIGTERM from an `exit` hook.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { onPath } from './lib.mjs';

/** Backoff between restarts: `initialMs` doubling up to `maxMs`, reset after `resetAfterMs` up. */
export const DEFAULT_BACKOFF = Object.freeze({ initialMs: 500, maxMs: 30_000, resetAfterMs: 10_000 });

/** The pause before the `failures`-th restart in a row (1-based). */
export function restartDelay(failures, backoff = DEFAULT_BACKOFF) {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures - 1));
}

const seconds = (ms) => `${Number((ms / 1000).toFixed(3))} s`;
const running = (child) => child !== undefined && child.exitCode === null && child.signalCode === null;

/**
 * @typedef {object} ProcessSpec
 * @property {string} name used in log lines
 * @property {string} command
 * @property {string[]} [args]
 * @property {Record<string, string | undefined> | (() => Record<string, string | undefined>)} [env]
 *   the whole environment, or a function that gives it at each start (e.g. a port learned at the first)
 * @property {string} [cwd]
 * @property {(child: import('node:child_process').ChildProcess) => void} [onSpawn]
 *   called at every start with the new process (stdout and stderr are pipes: read them here)
 */

export class Supervisor {
  /** @type {{ spec: ProcessSpec, child?: import('node:child_process').ChildProcess, timer?: NodeJS.Timeout }[]} */
  #entries = [];
  #stopping = false;
  #log;
  #backoff;
  #stopTimeoutMs;
  #tether;

  /**
   * @param {object} [options]
   * @param {(line: string) => void} [options.log] where restart and stop notices go (stderr)
   * @param {Partial<typeof DEFAULT_BACKOFF>} [options.backoff]
   * @param {number} [options.stopTimeoutMs] how long a child may take to stop before SIGKILL
   */
  constructor(options = {}) {
    this.#log = options.log ?? ((line) => console.error(line));
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#stopTimeoutMs = options.stopTimeoutMs ?? 25_000;
    this.#tether = process.platform === 'linux' && onPath('setpriv');
    if (!this.#tether) this.#log('› setpriv (util-linux) not found: children will outlive this process if it is killed with SIGKILL');
    process.once('exit', () => {
      for (const { child } of this.#entries) if (running(child)) child.kill('SIGTERM');
    });
  }

  /** Starts `spec` and keeps it running until stop(); returns its first process. */
  start(spec) {
    if (this.#stopping) throw new Error('the supervisor is stopping');
    const entry = { spec, failures: 0 };
    this.#entries.push(entry);
    this.#spawn(entry);
    return entry.child;
  }

  /** The current process of every started spec, by name (undefined while waiting to restart). */
  get children() {
    return Object.fromEntries(this.#entries.map(({ spec, child }) => [spec.name, running(child) ? child : undefined]));
  }

  #spawn(entry) {
    const { spec } = entry;
    const [command, args] = this.#tether ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', spec.command, ...(spec.args ?? [])]] : [spec.command, spec.args ?? []];
    const env = typeof spec.env === 'function' ? spec.env() : (spec.env ?? process.env);
    const child = spawn(command, args, { cwd: spec.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const startedAt = Date.now();
    entry.child = child;
    let ended = false;
    const onEnd = (why) => {
      if (ended) return;
      ended = true;
      if (this.#stopping) return;
      // Up long enough: this is a new failure, not one more of a crash loop.
      if (Date.now() - startedAt >= this.#backoff.resetAfterMs) entry.failures = 0;
      const delay = restartDelay(++entry.failures, this.#backoff);
      this.#log(`↻ ${spec.name} exited (${why}); restarting in ${seconds(delay)}`);
      entry.timer = setTimeout(() => {
        entry.timer = undefined;
        if (!this.#stopping) this.#spawn(entry);
      }, delay);
    };
    // A command that cannot start (ENOENT, EACCES) emits `error` and no `exit`.
    child.once('error', (err) => onEnd(err.code ?? err.message));
    child.once('exit', (code, signal) => onEnd(signal ?? `code ${code}`));
    spec.onSpawn?.(child);
  }

  /**
   * Stops every process in reverse start order: SIGTERM, then, after `stopTimeoutMs`, SIGKILL to
   * its whole process group. Nothing is restarted once this is called.
   */
  async stop() {
    this.#stopping = true;
    for (const entry of [...this.#entries].reverse()) {
      clearTimeout(entry.timer);
      const { child } = entry;
      if (!running(child)) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timedOut = await Promise.race([exited.then(() => false), sleep(this.#stopTimeoutMs).then(() => true)]);
      if (timedOut) {
        this.#log(`› ${entry.spec.name} did not stop within ${seconds(this.#stopTimeoutMs)}; killing it`);
        killGroup(child);
        await exited;
      }
    }
  }

  /**
   * Ctrl-C and SIGTERM stop everything, then exit with `code`. The same signal may come more than
   * once (npm passes it on, and a signal to the process group reaches this process too): the
   * first starts the stop, the others wait for it instead of ending the process at once.
   */
  stopOnSignals(code = 0) {
    let stopping;
    const onSignal = () => {
      stopping ??= this.stop().then(() => process.exit(code));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
}

function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL'); // detached: the child leads its own group
  } catch {
    child.kill('SIGKILL');
  }
}
