import { duplicateRedis, type RedisClient } from '@workspace/platform';
import type { ChangesLog, LoggedChange } from '../domain/ports.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IndexKeys } from './index.redis.js';

/** How often a long poll that found no blocking connection free looks again. */
const POLL_MS = 500;

type StreamEntry = [string, string[]];

/**
 * The changes feed on the user's Redis Stream (`{u:…}:fs:log`, appended by the index's
 * scripts). Long polls block in XREAD on connections of their own, kept in a small pool:
 * a blocked command would stall every other command of a shared connection.
 */
export class RedisChangesLog implements ChangesLog {
  readonly #redis: RedisClient;
  readonly #keys: IndexKeys;
  readonly #idle: RedisClient[] = [];
  readonly #maxIdle: number;
  readonly #maxWaiting: number;
  #waiting = 0;

  constructor(options: { redis: RedisClient; keys: IndexKeys; maxIdle?: number; maxWaiting?: number }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#maxIdle = options.maxIdle ?? 8;
    this.#maxWaiting = options.maxWaiting ?? 512;
  }

  async latest(userId: string): Promise<string> {
    const [last] = (await this.#redis.xrevrange(this.#key(userId), '+', '-', 'COUNT', 1)) as StreamEntry[];
    return last?.[0] ?? '0-0';
  }

  async expired(userId: string, after: string): Promise<boolean> {
    let info: unknown[];
    try {
      info = (await this.#redis.xinfo('STREAM', this.#key(userId))) as unknown[];
    } catch (err) {
      if (/no such key/i.test((err as Error).message)) return false;
      throw err;
    }
    const field = (name: string) => {
      const at = info.indexOf(name);
      return at >= 0 ? info[at + 1] : undefined;
    };
    // XDEL moves max-deleted-entry-id; the retention's XTRIM does not (Redis 7.0), it only moves
    // the first entry. So past a trim, any cursor before the first entry left may have lost
    // changes (one at the exact edge of the trim is told so too: it lists again, it never misses).
    if (compareIds(after, String(field('max-deleted-entry-id') ?? '0-0')) < 0) return true;
    const trimmed = Number(field('entries-added') ?? 0) > Number(field('length') ?? 0);
    const first = field('recorded-first-entry-id') ?? (field('first-entry') as StreamEntry | null | undefined)?.[0];
    return trimmed && first !== undefined && compareIds(after, String(first)) < 0;
  }

  async read(userId: string, after: string, count: number, waitMs: number, signal?: AbortSignal): Promise<LoggedChange[]> {
    const now = (await this.#redis.xrange(this.#key(userId), `(${after}`, '+', 'COUNT', count)) as StreamEntry[];
    if (now.length > 0 || waitMs <= 0 || signal?.aborted) return now.map(parse);
    if (this.#waiting >= this.#maxWaiting) {
      // Every blocking connection is taken: poll instead, at a pace Redis does not feel.
      await sleep(Math.min(waitMs, POLL_MS), undefined, { signal }).catch(() => undefined);
      return [];
    }
    return (await this.#block(userId, after, count, waitMs, signal)).map(parse);
  }

  async #block(userId: string, after: string, count: number, waitMs: number, signal?: AbortSignal): Promise<StreamEntry[]> {
    const connection = this.#idle.pop() ?? duplicateRedis(this.#redis);
    this.#waiting++;
    // A blocked XREAD cannot be cancelled on its connection: the caller leaving closes it.
    const onAbort = () => connection.disconnect();
    signal?.addEventListener('abort', onAbort, { once: true });
    let reusable = true;
    try {
      const reply = (await connection.xread('COUNT', count, 'BLOCK', waitMs, 'STREAMS', this.#key(userId), after)) as [string, StreamEntry[]][] | null;
      return reply?.[0]?.[1] ?? [];
    } catch (err) {
      reusable = false;
      if (signal?.aborted) return [];
      throw err;
    } finally {
      this.#waiting--;
      signal?.removeEventListener('abort', onAbort);
      if (reusable && !signal?.aborted && this.#idle.length < this.#maxIdle) this.#idle.push(connection);
      else connection.disconnect();
    }
  }

  #key(userId: string): string {
    return `${this.#keys.prefix(userId)}log`;
  }

  close(): void {
    for (const c of this.#idle.splice(0)) c.disconnect();
  }
}


/** Stream ids `ms-seq`, compared as numbers. */
export function compareIds(a: string, b: string): number {
  const [am = 0n, as = 0n] = a.split('-').map((x) => BigInt(x));
  const [bm = 0n, bs = 0n] = b.split('-').map((x) => BigInt(x));
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

function parse([id, fields]: StreamEntry): LoggedChange {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  return {
    id,
    type: f.t as LoggedChange['type'],
    kind: f.k as LoggedChange['kind'],
    path: f.p ?? '',
    ...(f.f !== undefined && { from: f.f }),
    at: Number(f.at),
    ...(f.s !== undefined && { size: Number(f.s), sha256: f.h ?? '' }),
  };
}
