import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface NatsClusterHandle {
  /** Comma-separated client URLs, as NATS_URL takes them. */
  url: string;
  stop(): Promise<void>;
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

/** Polls a node's monitoring endpoint until JetStream reports a meta leader. */
async function jetStreamReady(monitorPort: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${monitorPort}/jsz`).catch(() => undefined);
  if (!res?.ok) return false;
  const body = (await res.json()) as { meta_cluster?: { leader?: string } };
  return Boolean(body.meta_cluster?.leader);
}

/** A port picked free can be taken by another process before the node binds it: then try again on new ports. */
const ATTEMPTS = 3;

/**
 * A NATS cluster of `size` nodes with JetStream (so streams can have 3 replicas) on loopback,
 * each with its own store in a temporary directory; resolves once JetStream has a meta leader.
 */
export async function startNatsCluster(size = 3, binary = process.env.NATS_SERVER_BIN ?? 'nats-server'): Promise<NatsClusterHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(size, binary);
    } catch (err) {
      if (attempt >= ATTEMPTS || !(err instanceof NodeExited)) throw err;
    }
  }
}

class NodeExited extends Error {}

async function startOnce(size: number, binary: string): Promise<NatsClusterHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-cluster-'));
  const nodes = [];
  for (let i = 0; i < size; i++) nodes.push({ name: `n${i}`, client: await freePort(), route: await freePort(), monitor: await freePort() });
  const routes = nodes.map((n) => `nats-route://127.0.0.1:${n.route}`);
  const children: ChildProcess[] = [];
  const output: string[] = [];
  for (const node of nodes) {
    const conf = join(dir, `${node.name}.conf`);
    await writeFile(
      conf,
      [
        `server_name: ${node.name}`,
        `listen: 127.0.0.1:${node.client}`,
        `http: 127.0.0.1:${node.monitor}`,
        `jetstream { store_dir: "${join(dir, node.name)}" }`,
        `cluster { name: test, listen: 127.0.0.1:${node.route}, routes: [${routes.join(', ')}] }`,
      ].join('\n'),
    );
    const child = spawn(binary, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (chunk: Buffer) => output.push(`${node.name}: ${chunk.toString()}`));
    children.push(child);
  }
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
  const until = Date.now() + 30_000;
  while (!(await jetStreamReady(nodes[0]!.monitor))) {
    if (children.some((c) => c.exitCode !== null)) {
      await stop();
      throw new NodeExited(`a nats-server of the cluster exited at start: ${output.join('').slice(-2000)}`);
    }
    if (Date.now() > until) {
      await stop();
      throw new Error('the NATS cluster did not elect a JetStream leader within 30 s');
    }
    await sleep(200);
  }
  return { url: nodes.map((n) => `nats://127.0.0.1:${n.client}`).join(','), stop };
}
