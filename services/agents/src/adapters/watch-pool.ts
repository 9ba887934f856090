import type { ChainableCommander } from 'ioredis';
import { duplicateRedis, type RedisClient } from '@workspace/platform';

/** What a transaction body decided after its reads: a result, and the writes (if any) to commit. */
export interface Plan<T> {
  value: T;
  write?: ((tx: ChainableCommander) => void) | undefined;
}

/**
 * Optimistic Redis transactions on dedicated connections. WATCH belongs to a connection, so
 * running it on the shared, multiplexed client lets another caller's commands clear or
 * trip it and silently lose updates; each transaction here owns its connection from WATCH to
 * EXEC. Connections are duplicated on demand, up to `size`, and reused.
 */
export class WatchPool {
  readonly #base: RedisClient;
  readonly #size: number;
  readonly #idle: RedisClient[] = [];
  readonly #waiting: ((conn: RedisClient) => void)[] = [];
  #open = 0;
  #closed = false;

  constructor(base: RedisClient, size = 8) {
    this.#base = base;
    this.#size = size;
  }

  /**
   * WATCHes `keys`, runs `plan` (its reads go through the same connection), then MULTI/EXECs
   * the writes it returned. `committed` is false when a watched key changed meanwhile: nothing
   * was written and the caller decides whether to try again.
   */
  async run<T>(keys: string[], plan: (conn: RedisClient) => Promise<Plan<T>>): Promise<{ committed: boolean; value: T }> {
    const conn = await this.#acquire();
    let reusable = false;
    try {
      // The plan's reads follow WATCH on this connection without waiting for its answer.
      const watched = conn.watch(...keys);
      watched.catch(() => undefined); // a failure surfaces below, or with the plan's own
      const { value, write } = await plan(conn);
      await watched;
      if (!write) {
        await conn.unwatch();
        reusable = true;
        return { committed: true, value };
      }
      const tx = conn.multi();
      write(tx);
      const results = await tx.exec();
      reusable = true;
      if (results === null) return { committed: false, value };
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
      return { committed: true, value };
    } finally {
      this.#release(conn, reusable);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle.splice(0);
    await Promise.all(idle.map((c) => c.quit().catch(() => c.disconnect())));
  }

  async #acquire(): Promise<RedisClient> {
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#open < this.#size) {
      this.#open++;
      return this.#duplicate();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #duplicate(): RedisClient {
    const conn = duplicateRedis(this.#base);
    // Connection trouble surfaces on the commands of the transaction that meets it.
    conn.on('error', () => undefined);
    return conn;
  }

  /** A connection whose state is unknown (an error mid-transaction) is dropped, not reused. */
  #release(conn: RedisClient, reusable: boolean): void {
    if (!reusable || this.#closed) {
      conn.disconnect();
      this.#open--;
      if (this.#waiting.length > 0 && !this.#closed) {
        this.#open++;
        this.#waiting.shift()!(this.#duplicate());
      }
      return;
    }
    const next = this.#waiting.shift();
    if (next) next(conn);
    else this.#idle.push(conn);
  }
}
