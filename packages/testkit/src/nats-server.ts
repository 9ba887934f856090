import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { reachable } from './infra.js';

export interface NatsServerHandle {
  url: string;
  port: number;
  /** Stops the server (SIGTERM) and waits for it; its JetStream store is kept. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same store. */
  start(): Promise<void>;
  /** Stops it and removes its store. */
  [Symbol.asyncDispose](): Promise<void>;
  dispose(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A private nats-server with JetStream on a random loopback port and a temporary store, for
 * tests that stop and restart the broker. `binary` defaults to `nats-server` on the PATH.
 */
export async function startNatsServer(binary = process.env.NATS_SERVER_BIN ?? 'nats-server'): Promise<NatsServerHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-js-'));
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    const until = Date.now() + 15_000;
    while (!(await reachable(url, 200))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      if (Date.now() > until) throw new Error('nats-server did not start within 15 s');
      await sleep(50);
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM');
    await exited;
  };
  const dispose = async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  };
  await start();
  return { url, port, stop, start, dispose, [Symbol.asyncDispose]: dispose };
}
