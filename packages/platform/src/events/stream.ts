import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { retryWhen } from '../retry.js';

/** The one stream every service publishes its events to. */
export const STREAM_NAME = 'WORKSPACE_EVENTS';
export const STREAM_SUBJECTS = ['agents.>', 'projects.>', 'files.>', 'chats.>'];

export interface StreamOptions {
  name?: string;
  subjects?: string[];
  /** Replicas of the stream (3 on a NATS cluster in production). */
  replicas?: number;
  /** Events older than this are dropped; consumers down for longer miss them. */
  maxAgeMs?: number;
  /**
   * Publishes with a msgID seen within this window are dropped as duplicates. An outbox relay
   * retries for as long as NATS is down, so the window must outlast a retry after a lost ack.
   */
  duplicateWindowMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long the stream keeps an event: nothing older can still be delivered. */
export const EVENT_MAX_AGE_MS = 7 * DAY_MS;

function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === 10059;
}

/** A create that failed: another replica may have created the stream first. */
class CreateFailed extends Error {}

/** Three looks at most: after a failed create, look again (and widen what the winner made). */
const lookAgain = retryWhen((err) => err instanceof CreateFailed, { retries: 2 });

/**
 * Creates the stream, or widens an existing one's subjects. Safe to call from every replica at
 * once: a losing `add` is retried as an update.
 */
export async function ensureStream(jsm: JetStreamManager, options: StreamOptions = {}): Promise<void> {
  const name = options.name ?? STREAM_NAME;
  const subjects = options.subjects ?? STREAM_SUBJECTS;
  const config = {
    name,
    subjects,
    num_replicas: options.replicas ?? 1,
    max_age: nanos(options.maxAgeMs ?? EVENT_MAX_AGE_MS),
    duplicate_window: nanos(options.duplicateWindowMs ?? 10 * 60 * 1000),
  };
  try {
    await lookAgain(async () => {
      try {
        const info = await jsm.streams.info(name);
        const missing = subjects.filter((s) => !info.config.subjects?.includes(s));
        if (missing.length > 0) await jsm.streams.update(name, { ...info.config, subjects: [...(info.config.subjects ?? []), ...missing] });
        return;
      } catch (err) {
        if (!isStreamNotFound(err)) throw err;
      }
      await jsm.streams.add(config).catch((err: unknown) => {
        throw new CreateFailed('stream create failed', { cause: err });
      });
    });
  } catch (err) {
    throw err instanceof CreateFailed ? err.cause : err;
  }
}
