// Redis's own time in a step, from its SLOWLOG: the whole-tree operations of the files service
// are one Lua script each, and Redis serves nothing else while it runs, so how long Redis ran it
// says how much of the step's latency no code outside Redis can win back. Read only (the log is
// shared with whoever else uses this Redis); it holds commands slower than
// slowlog-log-slower-than (10 ms by default) and only the newest slowlog-max-len (128) of them.
import { Redis } from 'ioredis';
import { userTag } from '@workspace/platform';

/** Entries read per look: the log's default length. */
const LOOK = 128;

/**
 * A reader of the SLOWLOG of `redisUrl`, or undefined when there is none (a given stack) or it
 * cannot be read (a managed Redis that disables SLOWLOG). `step(userId, fn)` runs `fn` and
 * resolves with its result, the ms Redis spent in logged commands naming that user's keys, and
 * the longest of them (Redis serves no one else while one runs).
 */
export async function openSlowlog(redisUrl) {
  if (!redisUrl) return undefined;
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const [, threshold] = await redis.config('GET', 'slowlog-log-slower-than');
    const newestId = async () => Number((await redis.slowlog('GET', 1))[0]?.[0] ?? -1);
    await newestId();
    return {
      thresholdMs: Number(threshold) / 1000,
      async step(userId, fn) {
        const tag = userTag(userId);
        const before = await newestId();
        const out = await fn();
        const entries = await redis.slowlog('GET', LOOK);
        // [id, unix time, µs, [command, …args], client, name]
        const mine = entries.filter((e) => Number(e[0]) > before && e[3].some((a) => String(a).includes(tag)));
        const ms = mine.map((e) => Number(e[2]) / 1000);
        return { out, redisMs: ms.reduce((a, b) => a + b, 0), longestMs: Math.max(0, ...ms) };
      },
      close: () => redis.quit(),
    };
  } catch {
    redis.disconnect();
    return undefined;
  }
}
