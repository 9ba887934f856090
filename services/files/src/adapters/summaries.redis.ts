import { luaScript, type RedisClient } from '@workspace/platform';
import type { ContentSummaries } from '../domain/ports.js';
import type { IndexKeys } from './index.redis.js';

/**
 * Stores a summary only while its object is referenced (P refs holds it): a search that read
 * the bytes of a file deleted meanwhile leaves nothing behind. The sweeper's garbage claim
 * (CLAIM_GARBAGE) drops the summary of every object it deletes.
 */
const PUT = luaScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) return 1 end
return 0`);

/** Content summaries in the user's index (`P tri`: object key → summary), beside the entries. */
export class RedisContentSummaries implements ContentSummaries {
  readonly #redis: RedisClient;
  readonly #keys: IndexKeys;

  constructor(options: { redis: RedisClient; keys: IndexKeys }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
  }

  async get(userId: string, keys: readonly string[]): Promise<(Uint8Array | undefined)[]> {
    if (keys.length === 0) return [];
    const found = await this.#redis.hmgetBuffer(`${this.#keys.prefix(userId)}tri`, ...keys);
    return found.map((b) => b ?? undefined);
  }

  async put(userId: string, key: string, summary: Uint8Array): Promise<void> {
    const prefix = this.#keys.prefix(userId);
    await this.#redis.eval(PUT, 2, `${prefix}refs`, `${prefix}tri`, key, Buffer.from(summary));
  }
}
