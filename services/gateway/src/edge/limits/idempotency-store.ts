import { randomUUID } from 'node:crypto';
import { luaScript, type RedisClient } from '@workspace/platform';

/** A response as replayed to a repeat of its request. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The body's bytes, base64. */
  body: string;
}

type StoredRecord =
  | { state: 'pending'; fingerprint: string; owner: string }
  | { state: 'done'; fingerprint: string; response: StoredResponse };

/** What `begin` found: the request is ours to run, or it ran (or runs) already. */
export type Begin =
  | { kind: 'owner'; lock: IdempotencyLock }
  | { kind: 'done'; fingerprint: string; response: StoredResponse }
  | { kind: 'pending'; fingerprint: string };

/** Only the holder of the pending record may extend, complete or drop it (its value is the proof). */
const IF_HELD = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end`;
const EXTEND = luaScript(`${IF_HELD}
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`, { allowOom: true });
const COMPLETE = luaScript(`${IF_HELD}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`);
const DROP = luaScript(`${IF_HELD}
redis.call('DEL', KEYS[1])
return 1`, { allowOom: true });

/** The pending record of a request this replica runs: kept alive while it runs, then completed or dropped. */
export class IdempotencyLock {
  readonly #store: IdempotencyStore;
  readonly #key: string;
  readonly #value: string;

  constructor(store: IdempotencyStore, key: string, value: string) {
    this.#store = store;
    this.#key = key;
    this.#value = value;
  }

  extend(lockMs: number): Promise<boolean> {
    return this.#store.script(EXTEND, this.#key, this.#value, String(lockMs));
  }

  /** Stores the response for `ttlMs` in place of the lock (unless the lock was lost meanwhile). */
  complete(response: StoredResponse, fingerprint: string, ttlMs: number): Promise<boolean> {
    const done: StoredRecord = { state: 'done', fingerprint, response };
    return this.#store.script(COMPLETE, this.#key, this.#value, JSON.stringify(done), String(ttlMs));
  }

  /** Forgets the request: a repeat runs it again (after a 5xx, or when no response was made). */
  drop(): Promise<boolean> {
    return this.#store.script(DROP, this.#key, this.#value);
  }
}

/**
 * Idempotency records in Redis, one string per user and key: first a pending record with a short
 * expiry (the lock, extended while its request runs, so a replica that dies frees it within
 * `lockMs`), then the response, kept for a day.
 */
export class IdempotencyStore {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /** Takes the lock for `key` if nobody holds it and no response is stored; else reports what is there. */
  async begin(key: string, fingerprint: string, lockMs: number): Promise<Begin> {
    const pending: StoredRecord = { state: 'pending', fingerprint, owner: randomUUID() };
    const value = JSON.stringify(pending);
    for (;;) {
      if ((await this.#redis.set(key, value, 'PX', lockMs, 'NX')) === 'OK') return { kind: 'owner', lock: new IdempotencyLock(this, key, value) };
      const raw = await this.#redis.get(key);
      // Gone between the two commands (an expired lock, a dropped record): try to take it again.
      if (raw === null) continue;
      const found = JSON.parse(raw) as StoredRecord;
      return found.state === 'done' ? { kind: 'done', fingerprint: found.fingerprint, response: found.response } : { kind: 'pending', fingerprint: found.fingerprint };
    }
  }

  /** @internal */
  async script(lua: string, key: string, ...args: string[]): Promise<boolean> {
    return (await this.#redis.eval(lua, 1, key, ...args)) === 1;
  }
}
