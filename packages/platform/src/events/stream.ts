import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

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

function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === 10059;
}

/**
 * Creates the stream, or widens an existing one's subjects. Safe to call from every replica at
 * once: a losing `add` is retried as an update.
 */
export async function ensureStream(jsm: JetStreamManager, options: StreamOptions = {}): Promise<void> {
  const name = options.name ?? STREAM_NAME;
  const subjects = options.subjects ?? STREAM_SUBJECTS;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const info = await jsm.streams.info(name);
      const missing = subjects.filter((s) => !info.config.subjects?.includes(s));
      if (missing.length > 0) await jsm.streams.update(name, { ...info.config, subjects: [...(info.config.subjects ?? []), ...missing] });
      return;
    } catch (err) {
      if (!isStreamNotFound(err)) throw err;
    }
    const config = {
      name,
      subjects,
      num_replicas: options.replicas ?? 1,
      max_age: nanos(options.maxAgeMs ?? 7 * DAY_MS),
      duplicate_window: nanos(options.duplicateWindowMs ?? 10 * 60 * 1000),
    };
    try {
      await jsm.streams.add(config);
      return;
    } catch (err) {
      // Another replica created it first (with our config or another): look again.
      if (attempt === 2) throw err;
    }
  }
}
