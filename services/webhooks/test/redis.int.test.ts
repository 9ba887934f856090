import { randomBytes } from 'node:crypto';
import { createRedis, type RedisClient } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisDeliveryQueue } from '../src/adapters/delivery-queue.redis.js';
import { queueKeys } from '../src/adapters/keys.js';
import { RedisWebhookRepo } from '../src/adapters/webhook-repo.redis.js';
import type { Delivery, StoredWebhook } from '../src/domain/ports.js';

let redis: RedisClient;
let other: RedisClient;
const namespace = `int-${randomBytes(6).toString('hex')}`;
beforeAll(() => {
  const { redisUrl, redisCluster } = inject('infra');
  redis = createRedis({ url: redisUrl, cluster: redisCluster ?? false, name: 'webhooks-int' });
  other = createRedis({ url: redisUrl, cluster: redisCluster ?? false, name: 'webhooks-int-2' });
});
afterAll(async () => {
  const keys = queueKeys(namespace);
  await redis?.del(keys.due, keys.jobs, keys.claims);
  await Promise.all([redis?.quit(), other?.quit()]);
});

function delivery(i: number, userId = 'u'): Delivery {
  return { deliveryId: `whk_x:evt-${i}`, userId, webhookId: 'whk_x', eventId: `evt-${i}`, type: 'agent.created', body: `{"i":${i}}`, attempt: 0, firstAttemptAt: null };
}

function webhook(n = 0): StoredWebhook {
  return { webhookId: `whk_${randomBytes(16).toString('hex')}`, url: 'https://93.184.215.14/h', events: ['*'], description: '', enabled: true, createdAt: new Date(Date.now() + n).toISOString(), sealedSecret: 'plain.whsec_x' };
}

describe('delivery queue (Redis)', () => {
  it('delivery queue — two replicas claiming at once take each due delivery once; not-yet-due ones stay', async () => {
    const a = new RedisDeliveryQueue(redis, namespace);
    const b = new RedisDeliveryQueue(other, namespace);
    const now = Date.now();
    expect(await a.enqueue(Array.from({ length: 200 }, (_, i) => delivery(i)), now)).toBe(200);
    expect(await a.enqueue([delivery(999)], now + 60_000)).toBe(1);
    const claimed: string[] = [];
    await Promise.all(
      [a, b].map(async (q) => {
        for (;;) {
          const batch = await q.claim(now, 30_000, 7);
          if (batch.length === 0) return;
          claimed.push(...batch.map((c) => c.delivery.deliveryId));
        }
      }),
    );
    expect(claimed).toHaveLength(200);
    expect(new Set(claimed).size).toBe(200);
    expect(claimed).not.toContain('whk_x:evt-999');
    expect(await a.depth()).toBe(201);
  });

  it('delivery queue — an event handed over again schedules nothing twice, also after its delivery finished', async () => {
    const q = new RedisDeliveryQueue(redis, `${namespace}-dedupe`);
    const now = Date.now();
    expect(await q.enqueue([delivery(1), delivery(2)], now)).toBe(2);
    expect(await q.enqueue([delivery(1), delivery(2), delivery(3)], now)).toBe(1);
    const claims = await q.claim(now, 30_000, 10);
    for (const c of claims) await q.complete(c);
    expect(await q.depth()).toBe(0);
    expect(await q.enqueue([delivery(1), delivery(2), delivery(3)], now)).toBe(0);
    const keys = queueKeys(`${namespace}-dedupe`);
    await redis.del(...[1, 2, 3].map((i) => keys.done(`whk_x:evt-${i}`)));
  });

  it('delivery queue — a lease that ran out lets another replica claim; the first holder can then no longer reschedule or complete', async () => {
    const ns = `${namespace}-lease`;
    const q = new RedisDeliveryQueue(redis, ns);
    const now = Date.now();
    await q.enqueue([delivery(1)], now);
    const [first] = await q.claim(now, 1_000, 10);
    expect(await q.claim(now + 500, 1_000, 10)).toEqual([]);
    const [second] = await q.claim(now + 1_001, 1_000, 10);
    expect(second!.delivery.deliveryId).toBe(first!.delivery.deliveryId);
    await q.reschedule(first!, { ...first!.delivery, attempt: 5 }, now);
    await q.complete(first!);
    expect(await q.depth()).toBe(1);
    await q.reschedule(second!, { ...second!.delivery, attempt: 1, firstAttemptAt: now }, now + 2_000);
    const [third] = await q.claim(now + 2_000, 1_000, 10);
    expect(third!.delivery).toMatchObject({ attempt: 1, firstAttemptAt: now });
    await q.complete(third!);
    expect(await q.depth()).toBe(0);
    await redis.del(queueKeys(ns).done('whk_x:evt-1'));
  });
});

describe('webhook repository (Redis)', () => {
  it('webhook repo — a namespace holds its own webhooks: another deployment on the same Redis neither lists nor changes them', async () => {
    const mine = new RedisWebhookRepo(redis, namespace);
    const theirs = new RedisWebhookRepo(redis, `${namespace}-other`);
    const userId = newUserId();
    const w = webhook();
    expect(await mine.create(userId, w, 20)).toEqual({ status: 'created' });
    expect(await theirs.list(userId)).toEqual([]);
    expect(await theirs.get(userId, w.webhookId)).toBeUndefined();
    expect(await theirs.create(userId, webhook(1), 1)).toEqual({ status: 'created' }); // its own quota: one of one
    expect((await mine.list(userId)).map((x) => x.webhookId)).toEqual([w.webhookId]);
  });

  it('webhook repo — the quota holds under 30 concurrent creates; list is newest first', async () => {
    const repo = new RedisWebhookRepo(redis, namespace);
    const userId = newUserId();
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => repo.create(userId, webhook(i), 20)));
    expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(20);
    expect(outcomes.filter((o) => o.status === 'quota')).toEqual(Array(10).fill({ status: 'quota', used: 20 }));
    const list = await repo.list(userId);
    expect(list).toHaveLength(20);
    const times = list.map((w) => Date.parse(w.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('webhook repo — attempts: the log keeps the newest `keep`; a success stops the failure clock; failing for the window disables once', async () => {
    const repo = new RedisWebhookRepo(redis, namespace);
    const userId = newUserId();
    const w = webhook();
    await repo.create(userId, w, 20);
    const entry = (attempt: number, status: number) => ({ eventId: 'e', type: 'agent.created', attempt, status, error: status === 200 ? null : `HTTP ${status}`, at: new Date().toISOString() });
    const record = (attempt: number, ok: boolean, nowMs: number) => repo.recordAttempt({ userId, webhookId: w.webhookId, entry: entry(attempt, ok ? 200 : 500), ok, nowMs, disableAfterMs: 1_000, keep: 3 });
    expect(await record(1, false, 0)).toBe('kept');
    expect(await record(2, false, 999)).toBe('kept');
    expect(await record(3, true, 1_500)).toBe('kept');
    expect(await record(4, false, 2_000)).toBe('kept');
    expect(await record(5, false, 3_000)).toBe('disabled');
    expect(await record(6, false, 4_000)).toBe('kept');
    expect((await repo.attempts(userId, w.webhookId)).map((e) => e.attempt)).toEqual([6, 5, 4]);
    expect((await repo.get(userId, w.webhookId))!.enabled).toBe(false);
    expect((await repo.update(userId, w.webhookId, { enabled: true }))!).toMatchObject({ enabled: true, failingSince: undefined });
    expect(await repo.delete(userId, w.webhookId)).toBe(true);
    expect(await record(7, false, 5_000)).toBe('gone');
    expect(await repo.attempts(userId, w.webhookId)).toEqual([]);
    expect(await repo.update(userId, w.webhookId, { description: 'x' })).toBeUndefined();
    expect(await repo.delete(userId, w.webhookId)).toBe(false);
  });
});
