import { env } from '@workspace/platform';
import { z } from 'zod';

/** 32 bytes as 64 hex digits or base64 / base64url; empty or unset → secrets are stored as they are. */
const secretKey = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const value = v?.trim();
    if (!value) return undefined;
    const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    if (key.length !== 32) ctx.addIssue({ code: 'custom', message: 'must be 32 bytes as 64 hex digits or base64' });
    return key;
  });

export const configSchema = z.object({
  GRPC_HOST: z.string().default('0.0.0.0'),
  GRPC_PORT: env.port(50054),
  METRICS_PORT: env.port(9468),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER: env.bool(false),
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  AGENTS_ADDR: env.address('127.0.0.1:50053'),
  GRPC_DEADLINE_MS: env.positiveInt(5_000),
  /** Pause between passes over the due index (a due run starts within about this long). */
  SCHEDULER_TICK_MS: env.positiveInt(1_000),
  /** AES-256-GCM key sealing webhook secrets at rest (see adapters/secret-box.ts). */
  TRIGGER_SECRET_KEY: secretKey,
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
  OTEL_EXPORTER_OTLP_ENDPOINT: env.otlpEndpoint(),
});

export type AutomationsConfig = z.output<typeof configSchema>;
