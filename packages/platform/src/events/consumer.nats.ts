import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { context, trace } from '@opentelemetry/api';
import type { Logger } from '../logger.js';
import { retryForever } from '../retry.js';
import { extractTraceContext, SpanKind, SpanStatusCode, tracer } from '../tracing.js';
import { parseEvent, subjectOf, type EventData, type EventType, type WorkspaceEvent } from './schemas.js';
import { ensureStream, STREAM_NAME, type StreamOptions } from './stream.js';

/** Handles one event; must be idempotent: an event can arrive again after a crash or timeout. */
export type EventHandler<T extends EventType> = (event: WorkspaceEvent<T> & { data: EventData<T> }) => Promise<void>;
export type EventHandlers = { [T in EventType]?: EventHandler<T> };

export interface ConsumerOptions {
  /** `nats://host:port`, or several separated by commas. */
  url: string;
  logger: Logger;
  /** The consuming service: the durable consumers' names start with it, shared by its replicas. */
  service: string;
  handlers: EventHandlers;
  /** Deliveries of one event before it is parked (kept on `parked.<service>`) and skipped. */
  maxDeliver?: number;
  /** Redelivery delay after a failure, times the delivery count. */
  retryDelayMs?: number;
  /** How long one handler may take before the broker delivers the event again. */
  ackWaitMs?: number;
  stream?: StreamOptions;
  /** Told about every event handled: for metrics. */
  observe?: (type: string, outcome: 'ok' | 'retry' | 'parked') => void;
  /**
   * Where a durable starts when it is first created: at the oldest event the stream keeps
   * (default), or at the next one published (for consumers that act only on what happens from
   * now on, such as outbound webhooks, and must not replay days of history in a new deployment).
   */
  startAt?: 'first' | 'new';
  /**
   * Durables nobody consumed from for this long are removed by the server (0: never). Only for
   * short-lived deployments such as test stacks: a removed durable forgets its position.
   */
  inactiveThresholdMs?: number;
}

export const PARKED_STREAM = 'WORKSPACE_PARKED';

/** `agents.deleted` → `projects_agents_deleted`: one durable per service and subject. */
export function durableName(service: string, subject: string): string {
  return `${service}_${subject.replace(/[.*>]/g, '_')}`;
}

/**
 * Consumes workspace events with durable pull consumers (one per event subject, since the
 * NATS servers we support take one filter per consumer). All replicas of a service share the
 * durables, so each event is handled by one of them; a consumer that was down resumes where it
 * stopped. A failing event is retried with growing delay; after `maxDeliver` deliveries, or at
 * once when it cannot be parsed, it is parked on `parked.<service>` and logged, and the stream
 * moves on. Starting does not wait for NATS: the consumer connects when it can.
 */
export class EventConsumer {
  readonly #o: Required<Omit<ConsumerOptions, 'observe' | 'stream'>> & Pick<ConsumerOptions, 'observe'> & { stream: StreamOptions };
  #consuming = false;
  #nc: NatsConnection | undefined;
  #subscriptions: ConsumerMessages[] = [];
  #loops: Promise<void>[] = [];
  readonly #stop = new AbortController();
  #started: Promise<void> | undefined;

  constructor(options: ConsumerOptions) {
    this.#o = { maxDeliver: 5, retryDelayMs: 500, ackWaitMs: 30_000, stream: {}, startAt: 'first', inactiveThresholdMs: 0, ...options };
  }

  /** Connects (retrying until NATS answers) and starts consuming; resolves once consuming. */
  start(): Promise<void> {
    this.#started ??= this.#run();
    return this.#started;
  }

  async #run(): Promise<void> {
    await retryForever(() => this.#consumeAll(), {
      initialDelayMs: 250,
      maxDelayMs: 5_000,
      signal: this.#stop.signal,
      onFailure: (err, attempt) => {
        if (attempt === 1) this.#o.logger.warn({ err }, 'cannot reach NATS yet; consumers will start when it answers');
      },
    }).catch(() => undefined); // rejects only once stopped
  }

  async #consumeAll(): Promise<void> {
    const nc = (this.#nc ??= await connect({ servers: this.#o.url.split(',').map((s) => s.trim()), name: `${this.#o.service}-consumer`, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true }));
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, this.#o.stream);
    await ensureStream(jsm, { name: PARKED_STREAM, subjects: ['parked.>'], replicas: this.#o.stream.replicas ?? 1 });
    const js = jetstream(nc);
    for (const type of Object.keys(this.#o.handlers) as EventType[]) {
      const subject = subjectOf(type);
      const durable = durableName(this.#o.service, subject);
      await jsm.consumers.add(this.#o.stream.name ?? STREAM_NAME, {
        durable_name: durable,
        filter_subject: subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: this.#o.startAt === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
        ack_wait: nanos(this.#o.ackWaitMs),
        max_deliver: this.#o.maxDeliver + 1,
        ...(this.#o.inactiveThresholdMs > 0 && { inactive_threshold: nanos(this.#o.inactiveThresholdMs) }),
      });
      const consumer = await js.consumers.get(this.#o.stream.name ?? STREAM_NAME, durable);
      const messages = await consumer.consume({ max_messages: 64 });
      this.#subscriptions.push(messages);
      this.#loops.push(this.#loop(messages));
    }
    this.#consuming = true;
    this.#o.logger.info({ durables: Object.keys(this.#o.handlers) }, 'consuming events');
  }

  /** True once every durable exists and is being consumed. */
  get consuming(): boolean {
    return this.#consuming;
  }

  async #loop(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) await this.#handle(msg);
  }

  async #handle(msg: JsMsg): Promise<void> {
    let event: WorkspaceEvent;
    try {
      event = parseEvent(msg.string());
    } catch (err) {
      await this.#park(msg, 'unparseable', err);
      return;
    }
    const handler = this.#o.handlers[event.type] as EventHandler<EventType> | undefined;
    const span = tracer().startSpan(`consume ${event.type}`, { kind: SpanKind.CONSUMER, attributes: { 'messaging.system': 'nats', 'messaging.message.id': event.id } }, extractTraceContext({ traceparent: event.traceparent }));
    try {
      await context.with(trace.setSpan(context.active(), span), () => handler?.(event));
      msg.ack();
      this.#o.observe?.(event.type, 'ok');
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (msg.info.deliveryCount >= this.#o.maxDeliver) {
        await this.#park(msg, 'handler kept failing', err, event);
      } else {
        this.#o.logger.warn({ err, eventId: event.id, type: event.type, delivery: msg.info.deliveryCount }, 'event handler failed; will retry');
        msg.nak(this.#o.retryDelayMs * msg.info.deliveryCount);
        this.#o.observe?.(event.type, 'retry');
      }
    } finally {
      span.end();
    }
  }

  /** Keeps the poison message for people to look at, then acknowledges it so the stream moves on. */
  async #park(msg: JsMsg, why: string, err: unknown, event?: WorkspaceEvent): Promise<void> {
    this.#o.logger.error({ err, why, subject: msg.subject, eventId: event?.id, delivery: msg.info.deliveryCount }, 'event parked');
    try {
      await jetstream(this.#nc!).publish(`parked.${this.#o.service}`, msg.data, { msgID: `${this.#o.service}:${msg.info.streamSequence}` });
      msg.term(why);
      this.#o.observe?.(event?.type ?? 'unknown', 'parked');
    } catch (parkErr) {
      // Could not keep it: let it come back rather than lose it.
      this.#o.logger.error({ err: parkErr }, 'could not park event; it will be delivered again');
      msg.nak(this.#o.retryDelayMs);
    }
  }

  /** Events waiting per durable: for the consumer-lag metric. */
  async pending(): Promise<Record<string, number>> {
    if (!this.#nc) return {};
    const jsm = await jetstreamManager(this.#nc);
    const out: Record<string, number> = {};
    for (const type of Object.keys(this.#o.handlers) as EventType[]) {
      const durable = durableName(this.#o.service, subjectOf(type));
      const info = await jsm.consumers.info(this.#o.stream.name ?? STREAM_NAME, durable).catch(() => undefined);
      if (info) out[durable] = info.num_pending + info.num_ack_pending;
    }
    return out;
  }

  /** Stops taking events, lets the ones in hand finish, closes the connection. */
  async stop(): Promise<void> {
    this.#stop.abort();
    for (const s of this.#subscriptions) s.stop();
    await Promise.allSettled(this.#loops);
    await this.#nc?.drain().catch(() => this.#nc?.close());
  }
}
