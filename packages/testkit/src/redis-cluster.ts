import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RedisClusterHandle {
  /** Comma-separated seed URLs, as REDIS_URL with REDIS_CLUSTER=true takes them. */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A random port whose cluster bus port (port + 10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) return port;
  }
}

/**
 * Starts a Redis Cluster of `masters` nodes (no replicas) on loopback, in a temporary
 * directory, with `redis-server` and `redis-cli` from the PATH; `stop` removes everything.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const taken = new Set<number>();
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort(taken);
      taken.add(port);
      ports.push(port);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
        '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', join(dir, `${port}.log`)];
      children.push(spawn('redis-server', args, { stdio: 'ignore' }));
    }
    for (const port of ports) await waitFor(() => ping(port), `redis-server on ${port}`);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (const port of ports) await waitFor(() => clusterOk(port), `cluster state on ${port}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: ports.map((p) => `redis://127.0.0.1:${p}`).join(','), ports, stop };
}

async function ping(port: number): Promise<boolean> {
  try {
    return (await run('redis-cli', ['-p', String(port), 'ping'])).stdout.trim() === 'PONG';
  } catch {
    return false;
  }
}

async function clusterOk(port: number): Promise<boolean> {
  try {
    return (await run('redis-cli', ['-p', String(port), 'cluster', 'info'])).stdout.includes('cluster_state:ok');
  } catch {
    return false;
  }
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}
