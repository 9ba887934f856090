import { setTimeout as sleep } from 'node:timers/promises';
import { createEvent, type RedisOutbox, type WorkspaceEvent } from '@workspace/events';
import { userTag, type Logger, type RedisClient } from '@workspace/platform';
import type { FileChange, FileEvents } from '../domain/ports.js';

export const EVENT_SOURCE = '/workspace/files';

export interface OutboxFileEventsOptions {
  redis: RedisClient;
  outbox: RedisOutbox;
  logger: Logger;
  /** Told after events were queued for `tag`: wakes the relay. */
  onEvents?: (tag: string) => void;
  /** Tries to queue one report before giving up on it. */
  attempts?: number;
}

/**
 * File events through the Redis outbox that projects and agents use too, relayed to NATS.
 *
 * Unlike theirs, a file change lives in S3 and its event in Redis, and the two cannot share a
 * transaction. The event is appended right after the S3 change succeeds, inside the user's
 * commit lock, so:
 * - an event is never published for a change that did not happen (a failed copy or delete
 *   reports nothing), and one user's events follow the order of the changes;
 * - but a crash (or Redis failing beyond the retries below) between the S3 change and the
 *   append loses that one event: the change stands, and is logged at error level with the
 *   event, so a person can replay it. At-most-once for this window, where projects and agents
 *   are exactly-once; consumers that must not miss a change should also reconcile from S3.
 * Once in the outbox, an event is relayed at least once and stored once (its id is the msgID).
 */
export class OutboxFileEvents implements FileEvents {
  readonly #o: Required<OutboxFileEventsOptions>;

  constructor(options: OutboxFileEventsOptions) {
    this.#o = { onEvents: () => undefined, attempts: 3, ...options };
  }

  async report(userId: string, changes: readonly FileChange[]): Promise<void> {
    if (changes.length === 0) return;
    const events = changes.map((c) => toEvent(userId, c));
    const tag = userTag(userId);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#o.outbox.register(tag);
        const multi = this.#o.redis.multi();
        this.#o.outbox.append(multi, tag, events);
        const results = await multi.exec();
        const failed = results?.find(([err]) => err)?.[0];
        if (!results || failed) throw failed ?? new Error('the outbox transaction was aborted');
        this.#o.onEvents(tag);
        return;
      } catch (err) {
        // Repeats carry the same event ids, so an append that did land is still published once.
        if (attempt < this.#o.attempts) {
          await sleep(50 * attempt);
          continue;
        }
        this.#o.logger.error({ err, events }, 'file changed but its events could not be queued; they are lost');
        return;
      }
    }
  }
}

function toEvent(userId: string, change: FileChange): WorkspaceEvent {
  if (change.type === 'file.deleted') return createEvent(change.type, { source: EVENT_SOURCE, subject: change.path, data: { userId, path: change.path } });
  return createEvent(change.type, { source: EVENT_SOURCE, subject: change.path, data: { userId, path: change.path, size: change.size } });
}
