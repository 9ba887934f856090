import type { Logger, RedisClient } from '@workspace/platform';

/**
 * The index is the only record of which bytes make which file: a Redis that evicts keys under
 * memory pressure would silently lose files. Refuse to start on one. (Managed services that
 * forbid CONFIG GET are let through with a warning: their policy is the operator's to check.)
 */
export async function assertDurableRedis(redis: RedisClient, logger: Logger): Promise<void> {
  let policy: string | undefined;
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not read maxmemory-policy; make sure Redis never evicts (noeviction)');
    return;
  }
  if (policy && policy !== 'noeviction' && !policy.startsWith('volatile-')) {
    throw new Error(`Redis evicts keys (maxmemory-policy ${policy}); the file index needs maxmemory-policy noeviction`);
  }
}
