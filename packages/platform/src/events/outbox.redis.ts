import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { WorkspaceEvent } from './schemas.js';
import { luaScript } from '../lua.js';

/** Removes a pending marker only if nobody re-registered it since it was read, and it is old. */
const RELEASE_SCRIPT = luaScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and score == ARGV[2] and tonumber(score) < tonumber(ARGV[3]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0`, { allowOom: true });

/** How long a registration of a tag stands for this process's later writes: well under the relay's grace period. */
const REREGISTER_MS = 10_000;
const REGISTERED_MAX = 10_000;

export interface PendingOutbox {
  /** The hash tag of the outbox (one per user, `{u:…}`). */
  tag: string;
  /** When it was last registered (ms), as Redis printed it. */
  score: string;
}

/**
 * A transactional outbox in Redis. An event is appended to a list in the same slot as the data
 * it reports (the user's hash tag), inside the same MULTI, so both happen or neither.
 *
 * On Redis Cluster the relay cannot discover those lists by a transaction on another slot, so a
 * writer first *registers* the tag in a global sorted set (score = time), then runs its MULTI.
 * The relay drains registered lists and drops a marker only when its list is empty and the
 * marker is older than a grace period that any transaction outlives, so no event is stranded.
 */
export class RedisOutbox {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  /** When this process last registered each tag (ms). */
  readonly #registered = new Map<string, number>();

  /** `namespace` keeps each service's outbox apart (`agents` → `agents:outbox:…`). */
  constructor(options: { redis: RedisClient; namespace: string }) {
    this.#redis = options.redis;
    this.#prefix = `${options.namespace}:outbox`;
  }

  get pendingKey(): string {
    return `${this.#prefix}:pending`;
  }

  /** The list of one tag's events; it shares the slot of every key carrying `tag`. */
  listKey(tag: string): string {
    return `${this.#prefix}:${tag}`;
  }

  /**
   * Step one of a write that will append events: make the tag visible to the relay. A tag this
   * process registered less than REREGISTER_MS ago is not registered again: its marker is that
   * young or younger, and the relay drops only markers older than its grace period (60 s), after
   * draining the list, so the events of this write are published before it can go.
   */
  async register(tag: string, now = Date.now()): Promise<void> {
    const last = this.#registered.get(tag);
    if (last !== undefined && now >= last && now - last < REREGISTER_MS) return;
    await this.#redis.zadd(this.pendingKey, 'GT', now, tag);
    if (this.#registered.size >= REGISTERED_MAX) this.#registered.clear();
    this.#registered.set(tag, now);
  }

  /** Step two, inside the caller's MULTI: queue the events with the change they report. */
  append(multi: ChainableCommander, tag: string, events: readonly WorkspaceEvent[]): void {
    if (events.length > 0) multi.rpush(this.listKey(tag), ...this.encode(events));
  }

  /** The list entries of `events`, for a Lua script that RPUSHes them to `listKey(tag)` itself. */
  encode(events: readonly WorkspaceEvent[]): string[] {
    return events.map((e) => JSON.stringify(e));
  }

  /** Registered tags by rank, oldest registration first. */
  async pending(start: number, count: number): Promise<PendingOutbox[]> {
    const flat = await this.#redis.zrange(this.pendingKey, String(start), String(start + count - 1), 'WITHSCORES');
    const out: PendingOutbox[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ tag: flat[i]!, score: flat[i + 1]! });
    return out;
  }

  /** The oldest `count` events of a tag, as stored (JSON). */
  async peek(tag: string, count: number): Promise<string[]> {
    return this.#redis.lrange(this.listKey(tag), 0, count - 1);
  }

  /** Removes one published event; a no-op when another relay removed it already. */
  async remove(tag: string, raw: string): Promise<void> {
    await this.#redis.lrem(this.listKey(tag), 1, raw);
  }

  /** Removes published events (each once), in one round trip. */
  async removeAll(tag: string, raws: readonly string[]): Promise<void> {
    if (raws.length === 0) return;
    // The usual case, one write's one event: a pipeline of one costs the client a quarter more CPU.
    if (raws.length === 1) return this.remove(tag, raws[0]!);
    const pipeline = this.#redis.pipeline();
    for (const raw of raws) pipeline.lrem(this.listKey(tag), 1, raw);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async size(tag: string): Promise<number> {
    return this.#redis.llen(this.listKey(tag));
  }

  /**
   * Events waiting in the outbox, over the first `limit` registered users (a metric: on
   * Redis Cluster each list lives in its user's slot, so this is one LLEN per user).
   */
  async depth(limit = 1_000): Promise<number> {
    let total = 0;
    for (const { tag } of await this.pending(0, limit)) total += await this.size(tag);
    return total;
  }

  /** Drops the marker if it is unchanged since `read` and older than `olderThanMs`. */
  async release(entry: PendingOutbox, olderThanMs: number): Promise<boolean> {
    const removed = await this.#redis.eval(RELEASE_SCRIPT, 1, this.pendingKey, entry.tag, entry.score, String(olderThanMs));
    return removed === 1;
  }
}
