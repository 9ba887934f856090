import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@workspace/platform';
import type { Claim, Delivery, DeliveryQueue } from '../domain/ports.js';
import { queueKeys } from './keys.js';
import { CLAIM, COMPLETE, ENQUEUE, RESCHEDULE } from './queue.lua.js';

/**
 * How long a finished delivery is remembered, so an event NATS hands over again is not sent
 * again. NATS redelivers only what was not acknowledged — within the consumer's ack wait (30 s)
 * times its deliveries (5) — so an hour is ample, and memory stays at an hour of deliveries.
 */
const DONE_TTL_S = 60 * 60;

/** The shared delivery queue in Redis: a sorted set by due time, claimed atomically by scripts. */
export class RedisDeliveryQueue implements DeliveryQueue {
  readonly #redis: RedisClient;
  readonly #keys: ReturnType<typeof queueKeys>;

  constructor(redis: RedisClient, namespace: string) {
    this.#redis = redis;
    this.#keys = queueKeys(namespace);
  }

  async enqueue(deliveries: Delivery[], dueAt: number): Promise<number> {
    if (deliveries.length === 0) return 0;
    const { due, jobs, claims, done } = this.#keys;
    const keys = [due, jobs, claims, ...deliveries.map((d) => done(d.deliveryId))];
    const args = [String(dueAt), ...deliveries.flatMap((d) => [d.deliveryId, JSON.stringify(d)])];
    return Number(await this.#redis.eval(ENQUEUE, keys.length, ...keys, ...args));
  }

  async claim(nowMs: number, leaseMs: number, limit: number): Promise<Claim[]> {
    const { due, jobs, claims } = this.#keys;
    const reply = (await this.#redis.eval(CLAIM, 3, due, jobs, claims, String(nowMs), String(leaseMs), String(limit), randomBytes(12).toString('base64url'))) as string[];
    const out: Claim[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3) out.push({ token: reply[i + 1]!, delivery: JSON.parse(reply[i + 2]!) as Delivery });
    return out;
  }

  async reschedule(claim: Claim, next: Delivery, dueAt: number): Promise<void> {
    const { due, jobs, claims } = this.#keys;
    await this.#redis.eval(RESCHEDULE, 3, due, jobs, claims, claim.delivery.deliveryId, claim.token, JSON.stringify(next), String(dueAt));
  }

  async complete(claim: Claim): Promise<void> {
    const { due, jobs, claims, done } = this.#keys;
    await this.#redis.eval(COMPLETE, 4, due, jobs, claims, done(claim.delivery.deliveryId), claim.delivery.deliveryId, claim.token, String(DONE_TTL_S));
  }

  async depth(): Promise<number> {
    return this.#redis.zcard(this.#keys.due);
  }
}
