import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProjectsServiceService, type Project } from '@workspace/proto/workspace/projects/v1/projects';
import { startNatsServer, type NatsServerHandle } from '@workspace/testkit';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { z } from 'zod';
import { createClient, createHealthChecker, createLogger, defineService, errors, serviceConfig, startService, STREAM_NAME, type AsyncService, type BackgroundTask } from '../src/index.js';

// The service runtime with a real Redis of this file's own (so it can evict, or die) and a
// private NATS: what every service gets from it without wiring anything itself.
const logger = createLogger('runtime-test', 'silent');
const project = (name: string): Project => ({ name, goal: '', instructions: '', archived: false, createdAt: '', updatedAt: '', threads: [] });

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function startRedis(...args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true))).once('error', () => resolve(false));
    });
    if (up) return { url, child };
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

const events: string[] = [];
const task = (name: string): BackgroundTask => ({ start: () => void events.push(`${name} start`), stop: () => void events.push(`${name} stop`) });

const testService = defineService({
  name: 'runtime-test',
  config: serviceConfig({ grpc: 0, metrics: 0 }).extend({ GREETING: z.string().default('hello') }),
  deps: { suffix: (): string => 'built' },
  build(ctx, { suffix }) {
    ctx.background('ticker', task('ticker'));
    ctx.onStop('resource', () => void events.push('resource closed'));
    ctx.consume({ 'agent.deleted': async () => undefined });
    const impl: Partial<AsyncService<typeof ProjectsServiceService>> = {
      // Reads Redis as a repository would, with no mapping of its own.
      getProject: async (req) => project(`${ctx.config.GREETING} ${suffix} ${(await ctx.redis.get(`runtime-test:${req.name}`)) ?? '-'}`),
    };
    ctx.serve(ProjectsServiceService, new Proxy(impl, { get: (t, k) => (t as Record<string | symbol, unknown>)[k] ?? (async () => { throw errors.internal(); }) }) as AsyncService<typeof ProjectsServiceService>);
  },
});

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.dispose();
});

describe('service runtime', () => {
  it('runtime — a service is built from its config and parts: deps overridable, health served, the stream made with the configured replicas, the shutdown order kept', async () => {
    const redis = await startRedis();
    try {
      const env = { REDIS_URL: redis.url, NATS_URL: nats.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', GREETING: 'hi', NATS_STREAM_REPLICAS: '1' };
      const service = await startService(testService, { env, logger, deps: { suffix: 'given' } });
      const client = createClient(ProjectsServiceService, { serviceName: 'test', address: `127.0.0.1:${service.port}`, deadlineMs: 2_000 });
      expect((await client.getProject({ name: 'x' }, { userId: 'u' })).name).toBe('hi given -');
      const health = createHealthChecker(`127.0.0.1:${service.port}`);
      expect(await health.check(2_000)).toBe(true);
      // The consumer set the stream up (with the configured replicas) once NATS answered.
      const nc = await connect({ servers: nats.url });
      await expect.poll(async () => (await (await jetstreamManager(nc)).streams.info(STREAM_NAME).catch(() => undefined))?.config.num_replicas, { timeout: 10_000 }).toBe(1);
      await nc.close();
      expect(events).toEqual(['ticker start']);
      await service.stop();
      expect(events).toEqual(['ticker start', 'ticker stop', 'resource closed']);
      health.close();
      client.close();
    } finally {
      redis.child.kill('SIGKILL');
    }
  });

  it('runtime — warns once, loudly, at start on a Redis without AOF; says nothing on one with it', async () => {
    for (const appendonly of ['no', 'yes']) {
      const redis = await startRedis('--appendonly', appendonly);
      const lines: { level: number; msg: string }[] = [];
      const captured = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      try {
        const env = { REDIS_URL: redis.url, NATS_URL: nats.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', NATS_STREAM_REPLICAS: '1' };
        const service = await startService(testService, { env, logger: captured });
        await service.stop();
        const warned = lines.filter((l) => /WITHOUT AOF/.test(l.msg));
        expect(warned, appendonly).toHaveLength(appendonly === 'no' ? 1 : 0);
        if (appendonly === 'no') expect(warned[0]!.msg).toMatch(/appendonly yes.*appendfsync everysec/);
      } finally {
        redis.child.kill('SIGKILL');
      }
    }
  });

  it('runtime — refuses to start on a Redis that may evict keys, and says why', async () => {
    const redis = await startRedis('--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru');
    try {
      const env = { REDIS_URL: redis.url, NATS_URL: nats.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' };
      await expect(startService(testService, { env, logger })).rejects.toThrow(/maxmemory-policy allkeys-lru.*noeviction/);
    } finally {
      redis.child.kill('SIGKILL');
    }
  });

  it('runtime — any repository meeting a dead Redis answers UNAVAILABLE (retryable), not INTERNAL', async () => {
    const redis = await startRedis();
    const env = { REDIS_URL: redis.url, NATS_URL: nats.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' };
    const service = await startService(testService, { env, logger });
    const client = createClient(ProjectsServiceService, { serviceName: 'test', address: `127.0.0.1:${service.port}`, deadlineMs: 5_000 });
    try {
      redis.child.kill('SIGKILL');
      await new Promise((r) => redis.child.once('exit', r));
      await expect(client.getProject({ name: 'x' }, { userId: 'u' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      client.close();
      await service.stop();
    }
  });
});
