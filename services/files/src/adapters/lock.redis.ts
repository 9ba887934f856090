import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { errors, type Logger, type RedisClient } from '@workspace/platform';
import type { DistributedLock } from '../domain/ports.js';

// Only the holder (the token) may extend or release: a holder that stalled past the TTL
// must not delete the lock of the one that took over.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export interface RedisLockOptions {
  /** Expiry of a lock whose holder died; renewed every third of it while the holder works. */
  ttlMs?: number;
  /** How long to wait for a busy lock before answering UNAVAILABLE. */
  waitMs?: number;
}

/**
 * A lock shared by every replica: `SET key token NX PX ttl`, renewed while held, released by
 * compare-and-delete. S3 offers no compare-and-set that every S3-compatible store honours
 * (s3rver ignores If-None-Match), so the guard lives in Redis, which is atomic across
 * replicas. The TTL bounds how long a crashed holder can block others.
 */
export class RedisLock implements DistributedLock {
  readonly #redis: RedisClient;
  readonly #logger: Logger;
  readonly #ttlMs: number;
  readonly #waitMs: number;

  constructor(redis: RedisClient, logger: Logger, options: RedisLockOptions = {}) {
    this.#redis = redis;
    this.#logger = logger;
    this.#ttlMs = options.ttlMs ?? 15_000;
    this.#waitMs = options.waitMs ?? 120_000;
  }

  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = `lock:${name}`;
    const token = randomUUID();
    await this.#acquire(key, token);
    const renew = setInterval(() => {
      this.#redis.eval(RENEW, 1, key, token, String(this.#ttlMs)).catch((err: unknown) => this.#logger.warn({ err, key }, 'could not renew lock'));
    }, this.#ttlMs / 3);
    try {
      return await fn();
    } finally {
      clearInterval(renew);
      await this.#redis.eval(RELEASE, 1, key, token).catch((err: unknown) => this.#logger.warn({ err, key }, 'could not release lock; it expires on its own'));
    }
  }

  async #acquire(key: string, token: string): Promise<void> {
    const deadline = Date.now() + this.#waitMs;
    let backoff = 5;
    for (;;) {
      let ok: string | null;
      try {
        ok = await this.#redis.set(key, token, 'PX', this.#ttlMs, 'NX');
      } catch (err) {
        throw errors.unavailable('Redis', err);
      }
      if (ok === 'OK') return;
      if (Date.now() + backoff > deadline) throw errors.unavailable('the workspace (busy)');
      // Jitter keeps waiting replicas from retrying in lockstep.
      await sleep(backoff / 2 + Math.random() * backoff);
      backoff = Math.min(backoff * 2, 250);
    }
  }
}
