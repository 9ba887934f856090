import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { isRedisUnavailable } from '../redis-errors.js';

/**
 * Why Redis, as `INFO server` describes it, cannot run our scripts, or undefined: every script
 * starts with Redis 7's shebang (packages/platform/src/lua.ts), which Redis 6 cannot compile.
 */
export function redisVersionProblem(info: string): string | undefined {
  const version = /^redis_version:(\d+)\.(\d+)/m.exec(info);
  if (!version) return undefined;
  if (Number(version[1]) >= 7) return undefined;
  return `Redis ${version[1]}.${version[2]} is older than 7.0, which every script of the services needs (see docs/operations.md, "Redis durability")`;
}

/**
 * Every service keeps its only copy of what it owns in Redis (configurations, the file index,
 * schedules, outboxes): a Redis that evicts keys under memory pressure would silently lose
 * them. Refuse to start on one, or on a Redis older than 7.0 (redisVersionProblem). (Managed
 * services that forbid CONFIG GET are let through with a warning: their policy is the
 * operator's to check.)
 */
export async function assertDurableRedis(redis: RedisClient, logger: Logger): Promise<void> {
  let info = '';
  try {
    info = await redis.info('server');
  } catch (err) {
    if (isRedisUnavailable(err)) throw err;
    logger.warn({ err: (err as Error).message }, 'could not read the Redis version; the services need Redis 7.0 or later');
  }
  const tooOld = redisVersionProblem(info);
  if (tooOld) throw new Error(tooOld);
  let policy: string | undefined;
  // CONFIG GET on a cluster client goes to one node; every node of a deployment is configured alike.
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch (err) {
    // Not there yet: fail the start (the orchestrator starts it again), never skip the check.
    if (isRedisUnavailable(err)) throw err;
    logger.warn({ err: (err as Error).message }, 'could not read maxmemory-policy; make sure Redis never evicts (noeviction)');
    return;
  }
  if (policy && policy !== 'noeviction') {
    throw new Error(`Redis evicts keys (maxmemory-policy ${policy}); set maxmemory-policy noeviction (see docs/operations.md, "Redis durability")`);
  }
  const appendonly = ((await redis.config('GET', 'appendonly').catch(() => [])) as string[])[1];
  const noAof = aofProblem(appendonly);
  if (noAof) logger.warn({ appendonly }, noAof);
}

/**
 * Why Redis, with `appendonly` as CONFIG GET gives it, may lose acknowledged writes, or
 * undefined: without the append-only file a restart keeps at most the last snapshot, and every
 * write since (uploads committed, configurations, schedules) is gone. A warning, not a refusal:
 * `npm start` and tests run on a Redis that keeps nothing on purpose.
 */
export function aofProblem(appendonly: string | undefined): string | undefined {
  if (appendonly !== 'no') return undefined;
  return 'REDIS RUNS WITHOUT AOF (appendonly no): a Redis restart loses every write since its last snapshot. Set appendonly yes and appendfsync everysec for anything but a throwaway stack (see docs/operations.md, "Redis durability")';
}
