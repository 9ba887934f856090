import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError, errors, type Logger, luaScript, type RedisClient, userTag } from '@workspace/platform';
import { withTimeout } from './timeout.js';
import { userOf } from '../request-context.js';

/** What a user holds slots for: uploads (MAX_CONCURRENT_UPLOADS), searches (MAX_SEARCHES_PER_USER). */
export type SlotKind = 'uploads' | 'searches';

export interface UserSlotsOptions {
  redis: RedisClient;
  logger: Logger;
  kind: SlotKind;
  /** How many of one user's requests of the kind may run at once, across every replica. */
  max: number;
  /** A slot's lease, renewed while its request runs: a replica that dies frees its slots within it. */
  leaseMs?: number;
  timeoutMs?: number;
}

/**
 * Takes a slot: drops expired leases, then adds this request with its lease's end unless the
 * user holds `max` already. KEYS: the user's sorted set (request id → lease end, ms, Redis' clock).
 * ARGV: request id, lease (ms), max. Returns 1 when taken, 0 when full.
 */
const ACQUIRE = luaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/** Moves a held slot's lease end forward (only if it is still held). Same KEYS and ARGV. */
const RENEW = luaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`);

/**
 * A limit on one user's requests of a kind running at once — MAX_CONCURRENT_UPLOADS
 * (docs/api/conventions.md#concurrent-uploads), MAX_SEARCHES_PER_USER (docs/api/files.md#search) —
 * as leases in one Redis sorted set per user and kind: a slot is released when its request's
 * response closes — finished, failed or cut off by the client — and a slot whose replica died
 * expires with its lease.
 */
export class UserSlots {
  readonly #redis: RedisClient;
  readonly #logger: Logger;
  readonly #kind: SlotKind;
  readonly #max: number;
  readonly #leaseMs: number;
  readonly #timeoutMs: number;

  constructor(options: UserSlotsOptions) {
    this.#redis = options.redis;
    this.#logger = options.logger;
    this.#kind = options.kind;
    this.#max = options.max;
    this.#leaseMs = options.leaseMs ?? 60_000;
    this.#timeoutMs = options.timeoutMs ?? 2_000;
  }

  /** Takes one of the user's slots and returns its release (idempotent); RATE_LIMITED when all are held. */
  async acquire(userId: string): Promise<() => void> {
    const key = `gateway:${this.#kind}:${userTag(userId)}`;
    const id = randomUUID();
    const args = [id, String(this.#leaseMs), String(this.#max)];
    let taken: unknown;
    try {
      taken = await withTimeout(this.#redis.eval(ACQUIRE, 1, key, ...args), this.#timeoutMs);
    } catch (err) {
      throw errors.unavailable(`the ${this.#kind} slots`, err);
    }
    if (taken !== 1) {
      throw new AppError('RATE_LIMITED', `at most ${this.#max} ${this.#kind} may run at once; retry when one has finished`, {
        details: { limit: String(this.#max), retryAfter: '1' },
      });
    }
    const renewal = setInterval(() => void this.#redis.eval(RENEW, 1, key, ...args).catch(() => undefined), Math.max(1, Math.floor(this.#leaseMs / 3)));
    renewal.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(renewal);
      this.#redis.zrem(key, id).catch((err: unknown) => this.#logger.warn({ err: String(err) }, `could not release a slot of ${this.#kind}; its lease ends it`));
    };
  }

  /** Middleware: the request holds a slot until its response closes, however it ends. */
  guard(): RequestHandler {
    return async (_req, res, next) => {
      const held: { release?: () => void; closed?: boolean } = {};
      res.once('close', () => {
        held.closed = true;
        held.release?.();
      });
      held.release = await this.acquire(userOf(res));
      // The client may have gone while the slot was being taken.
      if (held.closed) held.release();
      next();
    };
  }
}
