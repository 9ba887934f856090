import type { ServiceDefinition as GrpcServiceDefinition } from '@grpc/grpc-js';
import type { z } from 'zod';
import { loadConfig, loadConfigOrExit } from '../config.js';
import { EventConsumer, type ConsumerOptions, type EventHandlers } from '../events/consumer.nats.js';
import { RedisOutbox } from '../events/outbox.redis.js';
import { JetStreamPublisher } from '../events/publisher.nats.js';
import { OutboxRelay, type EventPublisher } from '../events/relay.js';
import { createClient, type ClientOptions } from '../grpc/client.js';
import { HealthReporter } from '../grpc/health.js';
import { GrpcServer } from '../grpc/server.js';
import type { AsyncService, ServiceClient } from '../grpc/types.js';
import { createLogger, type Logger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { createRedis, type RedisClient } from '../redis.js';
import { onShutdown } from '../shutdown.js';
import { initTracing } from '../tracing.js';
import type { ServiceConfig } from './config.js';
import { assertDurableRedis } from './redis-policy.js';

/** Something that runs beside the API (a scheduler, a sweeper): started once serving, stopped after draining. */
export interface BackgroundTask {
  start(): void;
  stop(): Promise<void> | void;
}

/** What a service's parts are built from. Everything here is closed by the runtime at shutdown. */
export interface ServiceContext<C extends ServiceConfig = ServiceConfig> {
  readonly name: string;
  readonly config: C;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly redis: RedisClient;
  /** A client of another service, with the configured deadline. */
  client<S extends GrpcServiceDefinition>(definition: S, options: Omit<ClientOptions<Extract<keyof S, string>>, 'deadlineMs'> & { deadlineMs?: number }): ServiceClient<S>;
  /**
   * This service's outbox: a repository appends events in the transaction of its change and
   * calls `kick(tag)` after; the relay publishes them to JetStream (created on first use).
   */
  readonly events: { outbox: RedisOutbox; kick(tag?: string): void };
  /** Handles event types with durable consumers shared by the replicas (`group`: one per deployment). */
  consume(handlers: EventHandlers, group?: string, options?: Pick<ConsumerOptions, 'startAt' | 'observe' | 'inactiveThresholdMs'>): EventConsumer;
  /** Serves a gRPC service. */
  serve<S extends GrpcServiceDefinition>(definition: S, handlers: AsyncService<S>): void;
  /** Runs beside the API; `start` once serving, `stop` after draining. */
  background(name: string, task: BackgroundTask): void;
  /** Part of readiness, beside Redis answering (the bucket of the files service, say). */
  probe(check: () => Promise<void>): void;
  /** Releases something at shutdown, after the background tasks and before the clients. */
  onStop(name: string, run: () => Promise<unknown> | unknown): void;
}

/** Parts a test may replace (another service's client, say): each is built only when not given. */
export type DepFactories<C extends ServiceConfig, D> = { [K in keyof D]: (ctx: ServiceContext<C>) => D[K] };

export interface ServiceDefinition<S extends z.ZodType<ServiceConfig>, D = Record<string, never>> {
  name: string;
  config: S;
  deps?: DepFactories<z.output<S>, D>;
  /** Builds the domain from the context and serves it. Nothing else wires anything. */
  build(ctx: ServiceContext<z.output<S>>, deps: D): Promise<void> | void;
}

export function defineService<S extends z.ZodType<ServiceConfig>, D = Record<string, never>>(definition: ServiceDefinition<S, D>): ServiceDefinition<S, D> {
  return definition;
}

export interface StartOptions<D> {
  /** The environment (default: the process's). */
  env?: Record<string, string | undefined>;
  deps?: Partial<D>;
  logger?: Logger;
  /** Keeps this instance's outbox apart from others on the same Redis (tests); default: the service's name. */
  outboxNamespace?: string;
  /** Where the relay publishes (default: JetStream at NATS_URL). */
  publisher?: EventPublisher;
  /** Serve /metrics on METRICS_PORT (the process entry point does; tests need not). */
  serveMetrics?: boolean;
}

export interface RunningService<C> {
  config: C;
  logger: Logger;
  port: number;
  metricsPort: number | undefined;
  /** Events written but not yet handled by this instance's consumers (0 without any). */
  eventsPending(): Promise<number>;
  /** The shutdown order: readiness off, drain calls, background, consumers, relay, clients, Redis, metrics, tracing. */
  stop(): Promise<void>;
}

type Step = { name: string; run: () => Promise<unknown> | unknown };

/** Builds the service from its definition and serves; resolves once it listens and is ready. */
export async function startService<S extends z.ZodType<ServiceConfig>, D>(
  definition: ServiceDefinition<S, D>,
  options: StartOptions<D> = {},
): Promise<RunningService<z.output<S>>> {
  type C = z.output<S>;
  const config: C = loadConfig(definition.config, options.env ?? process.env);
  const name = definition.name;
  const logger = options.logger ?? createLogger(name, config.LOG_LEVEL);
  const tracing = await initTracing({ service: name, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const metrics = new Metrics(name);
  const redis = createRedis({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER, name });
  // One line when Redis goes away and one when it is back, not one per reconnect attempt.
  let redisDown = false;
  redis.on('error', (err: Error) => {
    if (!redisDown) logger.warn({ err: err.message }, 'Redis is unreachable; calls answer UNAVAILABLE until it is back');
    redisDown = true;
  });
  redis.on('ready', () => {
    if (redisDown) logger.info('Redis is reachable again');
    redisDown = false;
  });
  const stream = { replicas: config.NATS_STREAM_REPLICAS };
  const grpc = new GrpcServer(logger, { observe: metrics.grpcObserver() });
  const probes: Array<() => Promise<void>> = [async () => void (await redis.ping())];
  const background: Step[] = [];
  const stopHooks: Step[] = [];
  const clients: Step[] = [];
  const consumers: EventConsumer[] = [];
  let relayParts: { relay: OutboxRelay; publisher: EventPublisher & { close?(): Promise<void> }; outbox: RedisOutbox } | undefined;
  const starting: Array<() => void> = [];

  const ctx: ServiceContext<C> = {
    name,
    config,
    logger,
    metrics,
    redis,
    client(def, clientOptions) {
      const client = createClient(def, { deadlineMs: config.GRPC_DEADLINE_MS, ...clientOptions });
      clients.push({ name: `${clientOptions.serviceName} client`, run: () => client.close() });
      return client;
    },
    get events() {
      if (!relayParts) {
        const outbox = new RedisOutbox({ redis, namespace: options.outboxNamespace ?? name });
        const publisher = options.publisher ?? new JetStreamPublisher({ url: config.NATS_URL, logger, name, stream });
        const relay = new OutboxRelay({ outbox, publisher, logger, pollMs: config.OUTBOX_POLL_MS });
        relayParts = { relay, publisher, outbox };
        starting.push(() => relay.start());
        metrics.sampled('outbox_pending_events', 'Events written but not yet published to NATS', 'service', async () => ({ [name]: await outbox.depth() }));
      }
      const { relay, outbox } = relayParts;
      return { outbox, kick: (tag?: string) => relay.kick(tag) };
    },
    consume(handlers, group = name, consumerOptions = {}) {
      const consumer = new EventConsumer({ url: config.NATS_URL, logger, service: group, stream, handlers, ...consumerOptions });
      consumers.push(consumer);
      starting.push(() => void consumer.start());
      if (consumers.length === 1) {
        metrics.sampled('nats_consumer_pending', 'Events not yet handled (pending + unacknowledged), by durable consumer', 'durable', async () =>
          Object.assign({}, ...(await Promise.all(consumers.map((c) => c.pending())))) as Record<string, number>,
        );
      }
      return consumer;
    },
    serve(def, handlers) {
      grpc.add(def, handlers);
    },
    background(taskName, task) {
      starting.push(() => task.start());
      background.push({ name: taskName, run: () => task.stop() });
    },
    probe(check) {
      probes.push(check);
    },
    onStop(stepName, run) {
      stopHooks.push({ name: stepName, run });
    },
  };

  const health = new HealthReporter({ logger, probe: async () => void (await Promise.all(probes.map((p) => p()))) });
  let metricsServer: { port: number; close(): Promise<void> } | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAll());
  const stopAll = async () => {
    const order: Step[] = [
      { name: 'readiness', run: () => health.stop() },
      { name: 'grpc', run: () => grpc.drain(config.SHUTDOWN_GRACE_MS) },
      ...[...background].reverse(),
      ...consumers.map((c, i) => ({ name: `consumer ${i}`, run: () => c.stop() })),
      { name: 'relay', run: () => relayParts?.relay.stop() },
      // A publisher given by the caller is the caller's to close.
      { name: 'nats', run: () => (options.publisher ? undefined : relayParts?.publisher.close?.()) },
      ...[...stopHooks].reverse(),
      ...clients,
      { name: 'redis', run: () => redis.quit() },
      { name: 'metrics', run: () => metricsServer?.close() },
      { name: 'tracing', run: () => tracing.shutdown() },
    ];
    for (const step of order) {
      try {
        await step.run();
      } catch (err) {
        logger.error({ err, step: step.name }, 'shutdown step failed');
      }
    }
  };

  try {
    await assertDurableRedis(redis, logger);
    const deps = {} as D;
    const factories = (definition.deps ?? {}) as DepFactories<C, D>;
    for (const key of Object.keys(factories) as (keyof D)[]) deps[key] = options.deps?.[key] ?? factories[key](ctx);
    for (const key of Object.keys(options.deps ?? {}) as (keyof D)[]) deps[key] = options.deps![key] as D[keyof D];
    await definition.build(ctx, deps);
    health.addTo(grpc.server);
    const port = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    await health.start();
    for (const start of starting) start();
    if (options.serveMetrics) metricsServer = await metrics.serve(config.GRPC_HOST, config.METRICS_PORT);
    return {
      config,
      logger,
      port,
      metricsPort: metricsServer?.port,
      eventsPending: async () => (await Promise.all(consumers.map((c) => c.pending()))).flatMap((p) => Object.values(p)).reduce((a, b) => a + b, 0),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The entry point of a service process: config from the environment (every problem listed,
 * exit 2), start, one `listening` line, and the shutdown order on SIGTERM/SIGINT.
 */
export async function runService<S extends z.ZodType<ServiceConfig>, D>(definition: ServiceDefinition<S, D>): Promise<void> {
  const config = loadConfigOrExit(definition.config);
  const logger = createLogger(definition.name, config.LOG_LEVEL);
  let service: RunningService<z.output<S>>;
  try {
    service = await startService(definition, { logger, serveMetrics: true });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
  logger.info({ port: service.port, metricsPort: service.metricsPort }, 'listening');
  onShutdown(logger, [{ name: definition.name, run: () => service.stop() }], config.SHUTDOWN_GRACE_MS + 5_000);
}
