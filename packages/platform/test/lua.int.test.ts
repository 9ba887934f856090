import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, luaScript, type RedisClient } from '../src/index.js';

/**
 * What luaScript()'s flags mean to a Redis that is full (maxmemory reached, noeviction), on a
 * private redis-server: a script with the bare shebang is refused whole, even one that would only
 * read; `readOnly` runs; `allowOom` runs (a release must, or memory never comes back).
 */
let server: ChildProcess;
let redis: RedisClient;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  const port = await freePort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
  redis = createRedis({ url: `redis://127.0.0.1:${port}` });
  for (let i = 0; i < 100 && (await redis.ping().catch(() => '')) !== 'PONG'; i++) await sleep(50);
  await redis.set('{lua}big', 'x'.repeat(1024 * 1024));
  await redis.set('{lua}lock', 'me');
  // Full from now on: any memory in use is over the limit.
  await redis.config('SET', 'maxmemory', '1');
}, 30_000);
afterAll(async () => {
  await redis?.quit().catch(() => undefined);
  if (server && server.exitCode === null) {
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    await exited;
  }
});

describe('luaScript() on a full Redis', () => {
  it('lua — a script with the bare shebang is refused whole (OOM), a read among them', async () => {
    await expect(redis.eval(luaScript("redis.call('SET', KEYS[1], '1') return 1"), 1, '{lua}new')).rejects.toThrow(/^OOM /);
    await expect(redis.eval(luaScript("return redis.call('GET', KEYS[1])"), 1, '{lua}lock')).rejects.toThrow(/^OOM /);
    expect(await redis.exists('{lua}new')).toBe(0);
  });

  it('lua — readOnly runs, and a write inside it fails', async () => {
    expect(await redis.eval(luaScript("return redis.call('GET', KEYS[1])", { readOnly: true }), 1, '{lua}lock')).toBe('me');
    await expect(redis.eval(luaScript("return redis.call('DEL', KEYS[1])", { readOnly: true }), 1, '{lua}lock')).rejects.toThrow(/Write commands are not allowed/);
  });

  it('lua — allowOom runs: a renewal (no memory taken), and a release frees what it holds', async () => {
    expect(await redis.eval(luaScript("return redis.call('PEXPIRE', KEYS[1], ARGV[1])", { allowOom: true }), 1, '{lua}lock', '60000')).toBe(1);
    const release = luaScript("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", { allowOom: true });
    expect(await redis.eval(release, 1, '{lua}lock', 'me')).toBe(1);
    expect(await redis.eval(luaScript("return redis.call('DEL', KEYS[1])", { allowOom: true }), 1, '{lua}big')).toBe(1);
  });
});
