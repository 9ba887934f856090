import { env } from '@workspace/platform';
import { z } from 'zod';

export const configSchema = z.object({
  GRPC_HOST: z.string().default('0.0.0.0'),
  GRPC_PORT: env.port(50051),
  METRICS_PORT: env.port(9465),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER: env.bool(false),
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  /** Replicas of the event stream when this service creates it (3 on a NATS cluster). */
  NATS_STREAM_REPLICAS: env.positiveInt(1),
  /** The files service, which keeps project folders and context files. */
  FILES_ADDR: env.address('127.0.0.1:50052'),
  GRPC_DEADLINE_MS: env.positiveInt(5_000),
  LOG_LEVEL: env.logLevel(),
  OTEL_EXPORTER_OTLP_ENDPOINT: env.otlpEndpoint(),
  SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
});

export type ProjectsConfig = z.output<typeof configSchema>;
