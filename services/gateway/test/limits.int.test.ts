import { randomUUID } from 'node:crypto';
import { createLogger, createRedis, type RedisClient } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { IdempotencyStore } from '../src/edge/limits/idempotency-store.js';
import { RateLimiter } from '../src/edge/limits/rate-limit.js';
import { UserSlots } from '../src/edge/limits/user-slots.js';

const logger = createLogger('gateway-test', 'silent');
let redis: RedisClient;
beforeAll(() => {
  redis = createRedis({ url: inject('infra').redisUrl, cluster: inject('infra').redisCluster ?? false, name: 'gateway-limits-test' });
});
afterAll(async () => {
  await redis?.quit();
});

describe('rate limiter', () => {
  it('rate limits — a bucket of `burst` requests, refilled at `perSecond`, with the figures of the RateLimit-* headers', async () => {
    const limiter = new RateLimiter({ redis, perSecond: 5, burst: 10 });
    const key = `test:${randomUUID()}`;
    const burst = [];
    for (let i = 0; i < 10; i++) burst.push(await limiter.consume(key));
    expect(burst.every((d) => d.allowed && d.limit === 10)).toBe(true);
    expect(burst.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    // Ten tokens at 5 a second: the bucket is full again two seconds after the last one went.
    expect(burst.at(-1)!.resetSeconds).toBe(2);
    const refused = await limiter.consume(key);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, limit: 10 });
    expect(refused.resetSeconds).toBe(1); // the next token comes within 200 ms: at least 1 s, whole seconds
    // Refusals take nothing: a token comes back 200 ms later whatever was refused meanwhile.
    await expect.poll(async () => (await limiter.consume(key)).allowed, { interval: 50, timeout: 2_000 }).toBe(true);
    expect(await limiter.consume(key)).toMatchObject({ allowed: false });
  });

  it('rate limits — two limiters on one Redis (two gateway replicas) share one budget; keys are independent', async () => {
    const a = new RateLimiter({ redis, perSecond: 1, burst: 4 });
    const b = new RateLimiter({ redis, perSecond: 1, burst: 4 });
    const key = `test:${randomUUID()}`;
    const outcomes = await Promise.all([a, b, a, b, a, b].map((l) => l.consume(key)));
    expect(outcomes.filter((d) => d.allowed)).toHaveLength(4);
    expect((await a.consume(`test:${randomUUID()}`)).allowed).toBe(true);
  });

  it('rate limits — an unreachable Redis is UNAVAILABLE (503), not an error of the request', async () => {
    const down = createRedis({ url: 'redis://127.0.0.1:1', name: 'gateway-limits-down' });
    down.on('error', () => undefined);
    try {
      await expect(new RateLimiter({ redis: down, perSecond: 1, burst: 1, timeoutMs: 1_000 }).consume('k')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      await expect(new UserSlots({ redis: down, logger, kind: 'uploads', max: 1, timeoutMs: 1_000 }).acquire('u')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      down.disconnect();
    }
  });
});

describe('upload slots', () => {
  it('upload slots — at most `max` per user; a released slot is free again; users are independent', async () => {
    const slots = new UserSlots({ redis, logger, kind: 'uploads', max: 2 });
    const user = newUserId();
    const first = await slots.acquire(user);
    const second = await slots.acquire(user);
    await expect(slots.acquire(user)).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { limit: '2' } });
    const other = await slots.acquire(newUserId());
    first();
    first(); // releasing twice frees one slot only
    let third: (() => void) | undefined;
    await expect.poll(async () => (third = await slots.acquire(user).catch(() => undefined)), { interval: 20, timeout: 2_000 }).toBeTypeOf('function');
    await expect(slots.acquire(user)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    for (const release of [second, other, third!]) release();
  });

  it('upload slots — the slot of a replica that died (no renewals, no release) expires with its lease', async () => {
    const user = newUserId();
    const doomed = createRedis({ url: inject('infra').redisUrl, cluster: inject('infra').redisCluster ?? false, name: 'gateway-doomed' });
    doomed.on('error', () => undefined);
    const dying = new UserSlots({ redis: doomed, logger, kind: 'uploads', max: 1, leaseMs: 400 });
    const orphan = await dying.acquire(user);
    doomed.disconnect(); // the replica is gone: its renewals and its release never reach Redis
    const survivor = new UserSlots({ redis, logger, kind: 'uploads', max: 1, leaseMs: 400 });
    await expect(survivor.acquire(user)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    let taken: (() => void) | undefined;
    await expect.poll(async () => (taken = await survivor.acquire(user).catch(() => undefined)), { interval: 50, timeout: 3_000 }).toBeTypeOf('function');
    taken!();
    orphan();
  });

  it('upload slots — a held slot is renewed: a long upload keeps it past its first lease', async () => {
    const slots = new UserSlots({ redis, logger, kind: 'uploads', max: 1, leaseMs: 300 });
    const user = newUserId();
    const release = await slots.acquire(user);
    await new Promise((r) => setTimeout(r, 900)); // three leases long: only renewals keep it
    await expect(slots.acquire(user)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    release();
  });
});

describe('idempotency records', () => {
  it('idempotency — the first takes the lock, a repeat sees it pending, then the stored response', async () => {
    const store = new IdempotencyStore(redis);
    const key = `test:idem:${randomUUID()}`;
    const first = await store.begin(key, 'fp', 5_000);
    expect(first.kind).toBe('owner');
    expect(await store.begin(key, 'fp', 5_000)).toEqual({ kind: 'pending', fingerprint: 'fp' });
    if (first.kind !== 'owner') return;
    const response = { status: 201, headers: { location: '/x' }, body: Buffer.from('{}').toString('base64') };
    expect(await first.lock.complete(response, 'fp', 60_000)).toBe(true);
    expect(await store.begin(key, 'fp', 5_000)).toEqual({ kind: 'done', fingerprint: 'fp', response });
    // Kept for the TTL given, and no longer droppable by the former lock holder.
    expect(await redis.pttl(key)).toBeGreaterThan(55_000);
    expect(await first.lock.drop()).toBe(false);
  });

  it('idempotency — a dropped or expired lock lets the next request run; a stale holder cannot complete it', async () => {
    const store = new IdempotencyStore(redis);
    const key = `test:idem:${randomUUID()}`;
    const dropped = await store.begin(key, 'fp', 5_000);
    if (dropped.kind !== 'owner') throw new Error('expected the lock');
    expect(await dropped.lock.drop()).toBe(true);
    const expiring = await store.begin(key, 'fp', 200);
    if (expiring.kind !== 'owner') throw new Error('expected the lock');
    await expect.poll(async () => (await store.begin(key, 'fp', 5_000)).kind, { interval: 50, timeout: 2_000 }).toBe('owner');
    expect(await expiring.lock.complete({ status: 201, headers: {}, body: '' }, 'fp', 60_000)).toBe(false);
    expect(await expiring.lock.extend(5_000)).toBe(false);
  });
});
