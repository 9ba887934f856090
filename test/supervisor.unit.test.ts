import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { alive } from './support/processes.js';

/**
 * scripts/supervisor.mjs, driven as `npm start` drives it: a supervisor process (below) keeps
 * two children `a` and `b` running. Each child prints {"spawned":name,"pid":…} when it starts
 * and, on SIGTERM, appends its name to a marker file (so the stop order can be read back).
 */
const SUPERVISOR = fileURLToPath(new URL('../scripts/supervisor.mjs', import.meta.url));

const CHILD = `
const { appendFileSync } = require('node:fs');
const name = process.env.CHILD_NAME;
console.log(JSON.stringify({ spawned: name, pid: process.pid }));
process.on('SIGTERM', () => {
  appendFileSync(process.env.MARKER, name + '\\n');
  if (process.env.IGNORE_TERM !== name) setTimeout(() => process.exit(0), 50);
});
setInterval(() => {}, 1e9);
`;

const FIXTURE = `
import { createInterface } from 'node:readline';
import { Supervisor } from ${JSON.stringify(SUPERVISOR)};
const supervisor = new Supervisor({
  backoff: { initialMs: 200, maxMs: 800, resetAfterMs: 60_000 },
  stopTimeoutMs: Number(process.env.STOP_TIMEOUT_MS),
  log: (line) => console.log(JSON.stringify({ log: line })),
});
for (const name of ['a', 'b']) {
  supervisor.start({
    name,
    command: process.execPath,
    args: ['-e', ${JSON.stringify(CHILD)}],
    env: { ...process.env, CHILD_NAME: name },
    onSpawn: (child) => createInterface({ input: child.stdout }).on('line', (line) => console.log(line)),
  });
}
supervisor.stopOnSignals(0);
`;

interface Run {
  proc: ChildProcess;
  marker: string;
  events: { spawned?: string; pid?: number; log?: string }[];
  /** Pids of every child started so far. */
  pids(): number[];
  /** The pid of the latest start of `name`, once there are `count` starts of it. */
  started(name: string, count?: number): Promise<number>;
}

const runs: Run[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const run of runs.splice(0)) {
    for (const pid of run.pids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (run.proc.exitCode === null && run.proc.signalCode === null) run.proc.kill('SIGKILL');
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function supervise(env: Record<string, string> = {}): Run {
  const dir = mkdtempSync(join(tmpdir(), 'supervisor-'));
  dirs.push(dir);
  const marker = join(dir, 'stopped');
  const proc = spawn(process.execPath, ['--input-type=module', '-e', FIXTURE], {
    env: { ...process.env, MARKER: marker, STOP_TIMEOUT_MS: '5000', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const events: Run['events'] = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => events.push(JSON.parse(line)));
  const spawnsOf = (name: string) => events.filter((e) => e.spawned === name).map((e) => e.pid!);
  const run: Run = {
    proc,
    marker,
    events,
    pids: () => events.flatMap((e) => (e.pid === undefined ? [] : [e.pid])),
    started: async (name, count = 1) => {
      await expect.poll(() => spawnsOf(name).length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(count);
      return spawnsOf(name)[count - 1]!;
    },
  };
  runs.push(run);
  return run;
}


const logs = (run: Run) => run.events.flatMap((e) => (e.log === undefined ? [] : [e.log]));
const stopped = (run: Run) => readFileSync(run.marker, 'utf8').trim().split('\n');

describe('supervisor', () => {
  it('supervisor — the pause before each restart doubles from initialMs up to maxMs', async () => {
    const { restartDelay, DEFAULT_BACKOFF } = (await import(SUPERVISOR)) as {
      restartDelay(failures: number, backoff?: object): number;
      DEFAULT_BACKOFF: { initialMs: number; maxMs: number; resetAfterMs: number };
    };
    expect(DEFAULT_BACKOFF).toEqual({ initialMs: 500, maxMs: 30_000, resetAfterMs: 10_000 });
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => restartDelay(n))).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('supervisor — a child killed with SIGKILL starts again after a backoff that doubles, with a log line; SIGTERM stops all newest first and leaves no process', async () => {
    const run = supervise();
    const a1 = await run.started('a');
    const b1 = await run.started('b');
    process.kill(a1, 'SIGKILL');
    const a2 = await run.started('a', 2);
    expect(a2).not.toBe(a1);
    expect(logs(run)).toContain('↻ a exited (SIGKILL); restarting in 0.2 s');
    process.kill(a2, 'SIGKILL');
    const a3 = await run.started('a', 3);
    expect(logs(run)).toContain('↻ a exited (SIGKILL); restarting in 0.4 s');
    expect(run.events.filter((e) => e.spawned === 'b').map((e) => e.pid), 'b was left alone').toEqual([b1]);
    expect([a1, a2].some(alive)).toBe(false);

    run.proc.kill('SIGTERM');
    const [code] = await once(run.proc, 'exit');
    expect(code).toBe(0);
    expect(stopped(run), 'b (started last) stopped before a').toEqual(['b', 'a']);
    expect(run.pids().filter(alive)).toEqual([]);
    expect(run.events.filter((e) => e.spawned === 'a').map((e) => e.pid), 'nothing restarted while stopping').toEqual([a1, a2, a3]);
  });

  it('supervisor — killed itself with SIGKILL, its children are killed by the kernel (pdeathsig) and leave no process', async () => {
    const run = supervise();
    const pids = [await run.started('a'), await run.started('b')];
    expect(pids.filter(alive)).toEqual(pids);
    run.proc.kill('SIGKILL');
    await once(run.proc, 'exit');
    await expect.poll(() => pids.filter(alive), { timeout: 5_000, interval: 20 }).toEqual([]);
  });

  it('supervisor — a child that ignores SIGTERM is killed after stopTimeoutMs, and the others still stop', async () => {
    const run = supervise({ IGNORE_TERM: 'b', STOP_TIMEOUT_MS: '300' });
    const pids = [await run.started('a'), await run.started('b')];
    run.proc.kill('SIGTERM');
    const [code] = await once(run.proc, 'exit');
    expect(code).toBe(0);
    expect(logs(run)).toContain('› b did not stop within 0.3 s; killing it');
    expect(stopped(run)).toEqual(['b', 'a']);
    expect(pids.filter(alive)).toEqual([]);
  });
});
