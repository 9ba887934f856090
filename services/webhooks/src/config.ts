import { env, serviceConfig } from '@workspace/platform';
import { z } from 'zod';

/** A comma-separated list of host names or IP literals; empty → none. */
const hostList = z
  .string()
  .default('')
  .transform((v) => v.split(',').map((h) => h.trim()).filter(Boolean));

export const configSchema = serviceConfig({ grpc: 50055, metrics: 9469 }).extend({
  /**
   * Hosts webhooks may reach although they resolve to private or loopback addresses, and over
   * plain http (development: `npm start` lists 127.0.0.1 and localhost). Deployments list none.
   */
  WEBHOOK_ALLOWED_HOSTS: hostList,
  /** Webhooks one user may have (docs/api/usage.md#quotas); one more → 403 QUOTA_EXCEEDED. */
  MAX_WEBHOOKS: env.positiveInt(20),
  /** AES-256-GCM key sealing webhook signing secrets at rest (packages/platform/src/secret-box.ts). */
  WEBHOOK_SECRET_KEY: env.secretKey(),
  /** Keeps this deployment's webhooks, delivery queue and durable consumers apart from others on the same Redis and NATS. */
  WEBHOOK_NAMESPACE: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default('webhooks'),
  /** Durable consumers idle this long are removed by NATS (0: never; test stacks, each with its own namespace, set it). */
  WEBHOOK_CONSUMER_INACTIVE_MS: z.coerce.number().int().min(0).default(0),
  /** Wait after the first failed attempt; it doubles with every further failure (with jitter). */
  WEBHOOK_RETRY_BASE_MS: env.positiveInt(5_000),
  /** The longest wait between two attempts. */
  WEBHOOK_RETRY_MAX_MS: env.positiveInt(60 * 60_000),
  /** Attempts go on until one fails this long after the first; then the delivery is given up (≥ 24 h in production). */
  WEBHOOK_RETRY_WINDOW_MS: env.positiveInt(24 * 60 * 60_000),
  /** A webhook whose attempts have all failed for this long is disabled (docs/api/webhooks.md#disabling: 5 days). */
  WEBHOOK_DISABLE_AFTER_MS: env.positiveInt(5 * 24 * 60 * 60_000),
  /** One attempt's limit, connect to answer (docs/api/webhooks.md#delivery: 10 s). */
  WEBHOOK_TIMEOUT_MS: env.positiveInt(10_000),
  /** Attempts in flight to one webhook per replica; its other deliveries wait their turn. */
  WEBHOOK_CONCURRENCY_PER_RECEIVER: env.positiveInt(4),
  /** Attempts in flight per replica in all. */
  WEBHOOK_CONCURRENCY: env.positiveInt(256),
  /** Pause between a replica's passes over the queue when nothing wakes it (retries come due this late at most). */
  WEBHOOK_TICK_MS: env.positiveInt(500),
});

export type WebhooksConfig = z.output<typeof configSchema>;
