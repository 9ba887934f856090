import type { RedisClient } from '@workspace/platform';
import { queueIndexSet, searchKeysOf, trigramsOf } from './search-index.js';
import { keysOf } from './keys.js';
import { PRUNE, SEARCH } from './search.lua.js';

/** Agents indexed per pipelined round of a backfill. */
const BACKFILL_CHUNK = 200;

/**
 * Searches of the `q` index (search-index.ts), and its backfill. The backfill is the one-time
 * step for Agents written before the index existed: it runs for a user when a search finds the
 * index does not cover all of their Agents (that search is answered by a scan meanwhile). It is
 * idempotent and safe to run on several replicas at once: each Agent is indexed by one script
 * that checks the hash still holds the text its trigrams came from, so a write racing it
 * (which indexes the Agent itself) always wins.
 */
export class AgentSearchIndex {
  readonly #redis: RedisClient;
  readonly #running = new Map<string, Promise<number>>();

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /**
   * `<createdAt>|<agentId>` of every Agent whose normalized name or description contains `q`
   * (normalized, not empty), unordered; undefined when the index does not cover the user yet.
   */
  async find(userId: string, q: string): Promise<string[] | undefined> {
    const k = keysOf(userId);
    const s = searchKeysOf(userId);
    const keys = [k.index, s.docs, ...trigramsOf(q).map(s.gram)];
    const out = (await this.#redis.eval(SEARCH, keys.length, ...keys, q, k.agent(''))) as string[] | null;
    return out ?? undefined;
  }

  /** Starts the backfill of `userId` unless this process runs it already; failures wait for the next search. */
  scheduleBackfill(userId: string): void {
    if (this.#running.has(userId)) return;
    const run = this.backfill(userId)
      .catch(() => 0)
      .finally(() => this.#running.delete(userId));
    this.#running.set(userId, run);
  }

  /** Indexes every Agent of the user not indexed yet; resolves with how many it indexed. */
  async backfill(userId: string): Promise<number> {
    const k = keysOf(userId);
    const s = searchKeysOf(userId);
    let indexed = 0;
    for (let start = 0; ; start += BACKFILL_CHUNK) {
      const members = await this.#redis.zrange(k.index, String(start), String(start + BACKFILL_CHUNK - 1));
      if (members.length === 0) break;
      const ids = members.map((m) => m.slice(m.lastIndexOf('|') + 1));
      const known = (await this.#redis.smismember(s.docs, ...ids)) as number[];
      const todo = ids.filter((_, i) => known[i] !== 1);
      if (todo.length > 0) indexed += await this.#indexAll(k, s, todo);
      if (members.length < BACKFILL_CHUNK) break;
    }
    await this.#prune(userId);
    return indexed;
  }

  async #indexAll(k: ReturnType<typeof keysOf>, s: ReturnType<typeof searchKeysOf>, ids: string[]): Promise<number> {
    const read = this.#redis.pipeline();
    for (const id of ids) read.hmget(k.agent(id), 'searchName', 'searchDescription');
    const rows = (await read.exec()) ?? [];
    const write = this.#redis.pipeline();
    let n = 0;
    rows.forEach(([err, row], i) => {
      const [searchName, searchDescription] = (err ? [] : (row as (string | null)[])) as (string | null)[];
      if (searchName === null || searchName === undefined) return; // deleted meanwhile
      const text = { searchName, searchDescription: searchDescription ?? '' };
      queueIndexSet(write, s, k.agent(ids[i]!), ids[i]!, text);
      n++;
    });
    if (n > 0) await write.exec();
    return n;
  }

  /** Ids in the indexed set whose Agent is gone (only a write path that forgot the index leaves them). */
  async #prune(userId: string): Promise<void> {
    const k = keysOf(userId);
    const s = searchKeysOf(userId);
    if ((await this.#redis.scard(s.docs)) <= (await this.#redis.zcard(k.index))) return;
    const ids = await this.#redis.smembers(s.docs);
    for (let i = 0; i < ids.length; i += BACKFILL_CHUNK) await this.#redis.eval(PRUNE, 1, s.docs, k.agent(''), ...ids.slice(i, i + BACKFILL_CHUNK));
  }
}
