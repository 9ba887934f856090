import { env } from '@workspace/platform';
import { z } from 'zod';

export const configSchema = z.object({
  GRPC_HOST: z.string().default('0.0.0.0'),
  GRPC_PORT: env.port(50053),
  METRICS_PORT: env.port(9467),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER: env.bool(false),
  /** Dedicated Redis connections for WATCH/MULTI transactions (per replica). */
  REDIS_TX_CONNECTIONS: env.positiveInt(8),
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  /** Replicas of the event stream when this service creates it (3 on a NATS cluster). */
  NATS_STREAM_REPLICAS: env.positiveInt(1),
  PROJECTS_ADDR: env.address('127.0.0.1:50051'),
  /** The files service, which copies knowledge files into storage owned by the Agent. */
  FILES_ADDR: env.address('127.0.0.1:50052'),
  GRPC_DEADLINE_MS: env.positiveInt(5_000),
  /** Deadline of one knowledge copy call: it reads every byte of up to 20 files to hash them. */
  KNOWLEDGE_DEADLINE_MS: env.positiveInt(60_000),
  /** Configs kept per Agent; beyond it the oldest that are neither current nor pinned by a chat go. */
  CONFIG_RETENTION: env.positiveInt(100),
  /** How often the outbox relay looks for events without being woken (and retries while NATS is down). */
  OUTBOX_POLL_MS: env.positiveInt(1_000),
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
});

export type AgentsConfig = z.output<typeof configSchema>;
