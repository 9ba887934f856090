import { z } from 'zod';
import { env } from '../config.js';

/** What every process has: logging, tracing, metrics and a shutdown grace. */
export function processConfig(ports: { metrics: number }) {
  return z.object({
    METRICS_PORT: env.port(ports.metrics),
    LOG_LEVEL: env.logLevel(),
    /** OTLP/HTTP collector; tracing is off when unset. */
    OTEL_EXPORTER_OTLP_ENDPOINT: env.otlpEndpoint(),
    /** How long in-flight work may take to finish at shutdown before it is cut off. */
    SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
  });
}

/**
 * The base of every gRPC service's environment: listening, Redis, NATS and its stream, calls
 * to other services, the outbox. A service extends it with what is its own.
 */
export function serviceConfig(ports: { grpc: number; metrics: number }) {
  return processConfig(ports).extend({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: env.port(ports.grpc),
    REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
    REDIS_CLUSTER: env.bool(false),
    /** NATS with JetStream: events are relayed there from the outbox and consumed from it. */
    NATS_URL: z.string().default('nats://127.0.0.1:4222'),
    /** Replicas of the event streams when this service creates them (3 on a NATS cluster). */
    NATS_STREAM_REPLICAS: env.positiveInt(1),
    /** Deadline of a call to another service. */
    GRPC_DEADLINE_MS: env.positiveInt(5_000),
    /** How often the outbox relay looks for events without being woken (and retries while NATS is down). */
    OUTBOX_POLL_MS: env.positiveInt(1_000),
  });
}

export type ServiceConfig = z.output<ReturnType<typeof serviceConfig>>;
