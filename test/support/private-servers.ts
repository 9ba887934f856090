import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { reachable } from '@workspace/testkit';

/**
 * A Redis or NATS server of one test, on a loopback port and a temporary data directory, that
 * the test can kill (SIGKILL) and start again on the same port with the same data.
 */
export interface PrivateServer {
  url: string;
  /** SIGKILL, then wait until the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (SIGTERM) and removes its data. */
  dispose(): Promise<void>;
}

/** A loopback port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function privateServer(prefix: string, launch: (dir: string, port: number | undefined) => Promise<{ child: ChildProcess; port: number }>): Promise<PrivateServer> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const first = await launch(dir, undefined);
  const port = first.port;
  let child = first.child;
  const url = `${prefix.split('-')[0]}://127.0.0.1:${port}`;
  const alive = () => child.exitCode === null && child.signalCode === null;
  const end = async (signal: NodeJS.Signals) => {
    if (!alive()) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return {
    url,
    kill: () => end('SIGKILL'),
    start: async () => {
      ({ child } = await launch(dir, port));
    },
    dispose: async () => {
      await end('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until `url` accepts connections; fails at once with what the process printed if it exits. */
async function accepting(child: ChildProcess, url: string, output: string[]): Promise<void> {
  const until = Date.now() + 15_000;
  while (!(await reachable(url, 200))) {
    if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited with ${child.exitCode}: ${output.join('\n')}`);
    if (Date.now() > until) throw new Error(`${child.spawnfile} does not accept connections at ${url} after 15 s`);
    await sleep(50);
  }
}

/**
 * redis-server with AOF (`appendfsync everysec`, no RDB snapshots) and `noeviction`, as docs/operations.md
 * asks of production. Redis cannot pick its own port: the first start takes a free one and tries
 * another when that was taken meanwhile; a restart takes the same.
 */
export function startPrivateRedis(): Promise<PrivateServer> {
  return privateServer('redis-', async (dir, fixed) => {
    for (let attempt = 0; ; attempt++) {
      const port = fixed ?? (await freePort());
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--maxmemory-policy', 'noeviction'];
      const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const output: string[] = [];
      for (const s of [child.stdout!, child.stderr!]) createInterface({ input: s }).on('line', (l) => output.push(l));
      try {
        await accepting(child, `redis://127.0.0.1:${port}`, output);
        return { child, port };
      } catch (err) {
        child.kill('SIGKILL');
        if (fixed !== undefined || attempt >= 3 || !output.some((l) => l.includes('Address already in use'))) throw err;
      }
    }
  });
}

/**
 * nats-server with JetStream. The first start lets it pick its port (`-p -1`) and reads it from
 * its log; a restart takes the same port and store.
 */
export function startPrivateNats(): Promise<PrivateServer> {
  return privateServer('nats-', async (dir, fixed) => {
    const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(fixed ?? -1), '-js', '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    const port = await new Promise<number>((resolve, reject) => {
      for (const s of [child.stdout!, child.stderr!]) {
        createInterface({ input: s }).on('line', (line) => {
          output.push(line);
          const m = /Listening for client connections on [\d.]+:(\d+)/.exec(line);
          if (m) resolve(Number(m[1]));
        });
      }
      child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${output.join('\n')}`)));
    });
    await accepting(child, `nats://127.0.0.1:${port}`, output);
    return { child, port };
  });
}
