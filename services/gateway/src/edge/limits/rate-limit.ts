import type { RequestHandler, Response } from 'express';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, errors, luaScript, tenantKey, type RedisClient } from '@workspace/platform';
import { withTimeout } from './timeout.js';

export interface RateLimitOptions {
  redis: RedisClient;
  /** The steady rate: tokens added to a bucket per second (RATE_LIMIT_PER_SECOND). */
  perSecond: number;
  /** The bucket's size: requests that may come at once after a quiet spell (RATE_LIMIT_BURST). */
  burst: number;
  /** How long to wait for Redis before answering 503. */
  timeoutMs?: number;
}

/** What one request drew from its bucket, in the units of the RateLimit-* headers. */
export interface RateDecision {
  allowed: boolean;
  /** The bucket's size. */
  limit: number;
  /** Requests that may follow at once. */
  remaining: number;
  /** Seconds until the bucket is full again; when refused, until the next request is accepted. */
  resetSeconds: number;
}

/**
 * A token bucket as a GCRA (one timestamp per key, the "theoretical arrival time"), run as the
 * store script of rate-limiter-flexible's RateLimiterRedis: one EVALSHA per request, atomic, on
 * Redis' clock, so every gateway replica draws from the same budget. A request is accepted
 * while the bucket holds a token; the bucket refills at `perSecond` up to `burst`.
 *
 * The library reads the reply as {consumed, msBeforeNext} and refuses when consumed > burst, so
 * the script answers burst − remaining when accepted, and burst + 1 with the wait for the next
 * token when refused (refusals store nothing: hammering a full bucket does not push it further).
 * Exported for the bench's agent floors, which make the same call (bench/lib/floor-server.mjs).
 */
export function tokenBucketScript(perSecond: number, burst: number): string {
  const interval = 1000 / perSecond;
  return luaScript(`
local interval = ${interval}
local burst = ${burst}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next = tat + tonumber(ARGV[1]) * interval
local allowAt = next - burst * interval
if allowAt > now then return {burst + 1, math.ceil(allowAt - now)} end
redis.call('SET', KEYS[1], string.format('%.3f', next), 'PX', math.max(1, math.ceil(next - now)))
local remaining = math.floor((now + burst * interval - next) / interval + 1e-6)
return {burst - remaining, math.ceil(next - now)}`);
}

const REDIS_TIMEOUT_MS = 2_000;

/** Budgets of requests per key (a user, a webhook trigger), shared through Redis. */
export class RateLimiter {
  readonly #limiter: RateLimiterRedis;
  readonly #burst: number;
  readonly #timeoutMs: number;

  constructor(options: RateLimitOptions) {
    this.#burst = options.burst;
    this.#timeoutMs = options.timeoutMs ?? REDIS_TIMEOUT_MS;
    this.#limiter = new RateLimiterRedis({
      storeClient: options.redis,
      keyPrefix: 'gateway:rate',
      points: options.burst,
      // Unused by the script (it refills continuously), but the library needs a positive window.
      duration: Math.max(1, Math.ceil(options.burst / options.perSecond)),
      customIncrTtlLuaScript: tokenBucketScript(options.perSecond, options.burst),
    });
  }

  /** Takes `points` tokens (one request each) from `key`'s bucket. Redis unreachable or too slow → UNAVAILABLE (503). */
  async consume(key: string, points = 1): Promise<RateDecision> {
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await withTimeout(this.#limiter.consume(key, points), this.#timeoutMs);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw errors.unavailable('the rate limiter', err);
      res = err;
      allowed = false;
    }
    return { allowed, limit: this.#burst, remaining: res.remainingPoints, resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
  }
}

/** Sets RateLimit-Limit, -Remaining and -Reset; on a refusal, throws RATE_LIMITED with Retry-After. */
export function applyDecision(res: Response, decision: RateDecision): void {
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
  if (decision.allowed) return;
  res.setHeader('Retry-After', String(decision.resetSeconds));
  throw new AppError('RATE_LIMITED', `too many requests; retry in ${decision.resetSeconds} s`, { details: { retryAfter: String(decision.resetSeconds) } });
}

/** The key of a user's bucket: fixed length whatever the token's `sub` holds. */
export function userBucket(userId: string): string {
  return `user:${tenantKey(userId)}`;
}

/**
 * Middleware drawing one request from the bucket `keyOf` names (a user's after authentication,
 * a trigger's on the hook). Every answer after it carries the RateLimit-* headers.
 */
export function rateLimit(limiter: RateLimiter, keyOf: (req: Parameters<RequestHandler>[0], res: Response) => string): RequestHandler {
  return async (req, res, next) => {
    applyDecision(res, await limiter.consume(keyOf(req, res)));
    next();
  };
}
