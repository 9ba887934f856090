import type { Logger } from '../logger.js';
import type { PendingOutbox, RedisOutbox } from './outbox.redis.js';
import { parseEvent, type WorkspaceEvent } from './schemas.js';

/** Publishes one event; resolves once the broker has stored it (or had it already). */
export interface EventPublisher {
  publish(event: WorkspaceEvent): Promise<void>;
}

export interface RelayOptions {
  outbox: RedisOutbox;
  publisher: EventPublisher;
  logger: Logger;
  /** How often every registered outbox is looked at (and the retry pace while the broker is down). */
  pollMs?: number;
  /** A marker younger than this is kept even when its list is empty: its writer may still be in MULTI. */
  graceMs?: number;
  /** Markers and events read per round trip. */
  batch?: number;
}

/**
 * Moves events from the Redis outbox to the broker, oldest first, at least once; the broker
 * drops repeats by event id, so each event is stored once. Every replica runs a relay. A
 * replica's own writes are drained at once (`kick(tag)`); a full pass over every registered
 * outbox every `pollMs` picks up what other replicas left behind (a crash, the broker down).
 * Two relays on one outbox only publish duplicates that the broker discards.
 */
export class OutboxRelay {
  readonly #o: Required<Omit<RelayOptions, 'outbox' | 'publisher' | 'logger'>> & Pick<RelayOptions, 'outbox' | 'publisher' | 'logger'>;
  readonly #hot = new Set<string>();
  #running: Promise<void> | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  #lastFullPass = 0;
  #failing = false;

  constructor(options: RelayOptions) {
    this.#o = { pollMs: 1_000, graceMs: 60_000, batch: 100, ...options };
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Events were just appended to `tag`'s outbox (or somewhere, without a tag): publish now. */
  kick(tag?: string): void {
    if (tag !== undefined) this.#hot.add(tag);
    else this.#lastFullPass = 0;
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  /** One pass over every registered outbox; releases the markers of drained, old ones. */
  async drainOnce(): Promise<void> {
    const entries: PendingOutbox[] = [];
    for (let start = 0; ; start += this.#o.batch) {
      const page = await this.#o.outbox.pending(start, this.#o.batch);
      entries.push(...page);
      if (page.length < this.#o.batch) break;
    }
    for (const entry of entries) {
      if (this.#stopped) return;
      await this.#drainList(entry.tag);
      await this.#o.outbox.release(entry, Date.now() - this.#o.graceMs);
    }
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      const full = Date.now() - this.#lastFullPass >= this.#o.pollMs;
      const hot = [...this.#hot];
      this.#hot.clear();
      try {
        for (const tag of hot) await this.#drainList(tag);
        if (full) {
          this.#lastFullPass = Date.now();
          await this.drainOnce();
        }
        if (this.#failing) this.#o.logger.info('outbox relay publishing again');
        this.#failing = false;
      } catch (err) {
        // What was not published stays in the outbox with its marker: the next full pass retries.
        if (!this.#failing) this.#o.logger.warn({ err }, 'outbox relay cannot publish; events stay in the outbox and are retried');
        this.#failing = true;
      }
      if (this.#hot.size > 0 && !this.#failing) continue;
      await this.#sleep(Math.max(0, this.#o.pollMs - (Date.now() - this.#lastFullPass)));
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.#wake = undefined;
    });
  }

  /**
   * Publishes a tag's events in order, removing them once the broker has them. The events of one
   * read are published together (sent in order on one connection, acknowledged together) and
   * removed in one round trip; when any publish fails none is removed, and all are sent again
   * later (the broker drops the repeats by event id).
   */
  async #drainList(tag: string): Promise<void> {
    const { outbox, publisher, batch, logger } = this.#o;
    for (;;) {
      const raws = await outbox.peek(tag, batch);
      if (raws.length === 0) return;
      const events: WorkspaceEvent[] = [];
      for (const raw of raws) {
        try {
          events.push(parseEvent(raw));
        } catch (err) {
          // Never block an outbox on one bad entry; it is logged whole for a human to replay.
          logger.error({ err, raw }, 'dropping an outbox entry that is not a valid event');
        }
      }
      await Promise.all(events.map((event) => publisher.publish(event)));
      await outbox.removeAll(tag, raws);
      // A shorter read emptied the list; what a writer appends from now on comes with a kick.
      if (raws.length < batch) return;
    }
  }
}
