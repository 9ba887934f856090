import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { isRedisUnavailable } from '../redis-errors.js';

/**
 * Every service keeps its only copy of what it owns in Redis (configurations, the file index,
 * schedules, outboxes): a Redis that evicts keys under memory pressure would silently lose
 * them. Refuse to start on one. (Managed services that forbid CONFIG GET are let through with
 * a warning: their policy is the operator's to check.)
 */
export async function assertDurableRedis(redis: RedisClient, logger: Logger): Promise<void> {
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
}
