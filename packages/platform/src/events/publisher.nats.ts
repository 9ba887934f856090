import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../logger.js';
import type { EventPublisher } from './relay.js';
import { subjectOf, type WorkspaceEvent } from './schemas.js';
import { ensureStream, type StreamOptions } from './stream.js';

export interface JetStreamPublisherOptions {
  /** `nats://host:port`, or several separated by commas. */
  url: string;
  logger: Logger;
  /** Shown by the server's monitoring. */
  name: string;
  /** How long one publish waits for the stream's ack (or for a connection). */
  timeoutMs?: number;
  stream?: StreamOptions;
}

class BrokerUnavailable extends Error {
  override readonly name = 'BrokerUnavailable';
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BrokerUnavailable(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Publishes events to JetStream with the event id as msgID, so a retried publish is stored
 * once. Connects lazily and keeps reconnecting forever: the service starts and serves while
 * NATS is down, and its outbox catches up when NATS is back.
 */
export class JetStreamPublisher implements EventPublisher {
  readonly #o: Required<Omit<JetStreamPublisherOptions, 'stream'>> & { stream: StreamOptions };
  #connection: Promise<NatsConnection> | undefined;
  /** Set while connected with the stream known to exist. */
  #js: JetStreamClient | undefined;
  #setup: Promise<JetStreamClient> | undefined;

  constructor(options: JetStreamPublisherOptions) {
    this.#o = { timeoutMs: 3_000, stream: {}, ...options };
  }

  /**
   * The first connection attempt fails fast when NATS is down (the next publish tries again);
   * once connected, the client reconnects forever on its own.
   */
  #connect(): Promise<NatsConnection> {
    this.#connection ??= connect({
      servers: this.#o.url.split(',').map((s) => s.trim()),
      name: this.#o.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: this.#o.timeoutMs,
      // A publish's error already names what failed: no stack captured per publish to extend it with.
      noAsyncTraces: true,
    }).then(
      (nc) => {
        void this.#watch(nc);
        return nc;
      },
      (err: unknown) => {
        this.#connection = undefined;
        throw new BrokerUnavailable('cannot connect to NATS', { cause: err });
      },
    );
    return this.#connection;
  }

  async #watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') this.#o.logger.info({ status: s.type }, 'nats connection');
      // A restarted server may have lost the stream (no persistent store): check again.
      if (s.type === 'reconnect') {
        this.#js = undefined;
        this.#setup = undefined;
      }
    }
  }

  async publish(event: WorkspaceEvent): Promise<void> {
    try {
      // Connected with the stream in place: publish at once, so concurrent publishes go out in
      // the order they were called. Otherwise every caller waits for one shared setup.
      const js = this.#js ?? (await withTimeout((this.#setup ??= this.#prepare()), this.#o.timeoutMs, 'connecting to NATS'));
      await js.publish(subjectOf(event.type), JSON.stringify(event), { msgID: event.id, timeout: this.#o.timeoutMs });
    } catch (err) {
      this.#js = undefined;
      this.#setup = undefined;
      throw err;
    }
  }

  /** Connects (or reuses the connection), makes sure the stream exists, and keeps the JetStream client. */
  async #prepare(): Promise<JetStreamClient> {
    try {
      const nc = await this.#connect();
      await withTimeout(jetstreamManager(nc, { timeout: this.#o.timeoutMs }).then((jsm) => ensureStream(jsm, this.#o.stream)), this.#o.timeoutMs, 'stream setup');
      this.#js = jetstream(nc, { timeout: this.#o.timeoutMs });
      return this.#js;
    } catch (err) {
      this.#setup = undefined;
      throw err;
    }
  }

  /** Flushes and closes the connection, if one was made. */
  async close(): Promise<void> {
    const pending = this.#connection;
    this.#connection = undefined;
    const nc = await pending?.catch(() => undefined);
    if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
  }
}
