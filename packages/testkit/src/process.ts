import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface SpawnedService {
  name: string;
  port: number;
  /** Where its Prometheus metrics are served (GET /metrics). */
  metricsPort: number | undefined;
  child: ChildProcess;
  /** What it was started with, to start it again. */
  entry: string;
  env: Record<string, string>;
  /** Every log line the process printed so far (JSON lines as parsed objects). */
  logs: Record<string, unknown>[];
  /** What it wrote to stderr so far (Node's own warnings land there), in chunks. */
  stderr: string[];
  /** SIGTERM, then wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts a built service (`node <entry>`) with `env` (use port 0 for a random port) and waits
 * for its `listening` log line, which carries the bound port.
 */
export interface SpawnOptions {
  /** How long to wait for the `listening` line. */
  timeoutMs?: number;
  /**
   * Keep at most this many log lines (the newest): a process that serves a whole test run (a
   * shared stack) must not hold every line it ever printed. Unset: all of them.
   */
  maxLogLines?: number;
}

/** How long `stop` waits after SIGTERM before it sends SIGKILL (services give their shutdown 25 s). */
const STOP_TIMEOUT_MS = 35_000;

export async function spawnService(name: string, entry: string, env: Record<string, string>, options: SpawnOptions = {}): Promise<SpawnedService> {
  const { timeoutMs = 60_000, maxLogLines } = options;
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  let metricsPort: number | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: nothing would ever stop it.
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in ${timeoutMs} ms: ${stderr.join('')}`));
    }, timeoutMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (maxLogLines !== undefined && logs.length > maxLogLines) logs.splice(0, logs.length - maxLogLines);
        if (entry.msg === 'listening' && typeof entry.port === 'number') {
          clearTimeout(timer);
          if (typeof entry.metricsPort === 'number') metricsPort = entry.metricsPort;
          resolve(entry.port);
        }
      } catch {
        logs.push({ raw: line });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening: ${stderr.join('')}`));
    });
  });
  // A process that dies on its own after it started takes every test that shares it down with
  // it: say so, with what it printed last, instead of leaving only a refused connection behind.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (stopping) return;
    const tail = stderr.join('').slice(-4000) || JSON.stringify(logs.slice(-5));
    console.error(`${name} (pid ${child.pid}) exited unexpectedly with ${code ?? signal}:\n${tail}`);
  });
  return {
    name,
    port,
    metricsPort,
    child,
    entry,
    env,
    logs,
    stderr,
    stop: async () => {
      // Gone already: exited, or killed by a signal (then exitCode stays null and 'exit' never fires again).
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      stopping = true;
      child.kill('SIGTERM');
      // A service's own shutdown ends within 25 s; one that does not is killed, and said so, rather than hang the suite.
      const timer = setTimeout(() => {
        console.error(`${name} (pid ${child.pid}) did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM; killing it. Last lines: ${JSON.stringify(logs.slice(-5))}`);
        child.kill('SIGKILL');
      }, STOP_TIMEOUT_MS);
      const [code] = (await exited.finally(() => clearTimeout(timer))) as [number | null];
      return code;
    },
  };
}

/** Stops a service (gracefully) if it runs, and starts it again on the same port. */
export async function restartService(service: SpawnedService): Promise<SpawnedService> {
  await service.stop();
  const port = String(service.port);
  return spawnService(service.name, service.entry, { ...service.env, GRPC_PORT: port, PORT: port });
}
