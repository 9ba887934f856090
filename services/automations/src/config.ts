import { env, serviceConfig } from '@workspace/platform';
import { z } from 'zod';

export const configSchema = serviceConfig({ grpc: 50054, metrics: 9468 }).extend({
  AGENTS_ADDR: env.address('127.0.0.1:50053'),
  /** Pause between passes over the due index (a due run starts within about this long). */
  SCHEDULER_TICK_MS: env.positiveInt(1_000),
  /**
   * How long a claimed run is kept from other replicas while its chat starts; after a crash the
   * run waits this long before another replica takes it. Keep it above GRPC_DEADLINE_MS.
   */
  SCHEDULER_LEASE_MS: env.positiveInt(15_000),
  /** The most schedules one Agent may have (docs/api/usage.md#quotas); a create beyond it → 403 QUOTA_EXCEEDED. */
  MAX_SCHEDULES_PER_AGENT: env.positiveInt(50),
  /** The most webhook triggers one Agent may have (docs/api/usage.md#quotas); beyond it → 403 QUOTA_EXCEEDED. */
  MAX_TRIGGERS_PER_AGENT: env.positiveInt(50),
  /**
   * The prefix of every key of the service (the due index, schedules, triggers) and its consumer
   * group, so that deployments (or test stacks) sharing one Redis and NATS never run, or remove,
   * each other's schedules and triggers. Every replica of one deployment must use the same.
   */
  DUE_INDEX_NAMESPACE: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).default('automations'),
  /** AES-256-GCM key sealing webhook secrets at rest (see packages/platform/src/secret-box.ts). */
  TRIGGER_SECRET_KEY: env.secretKey(),
});

export type AutomationsConfig = z.output<typeof configSchema>;

/**
 * The consumer group of the automations services on one due index: an Agent's deletion must be
 * handled by a replica that cleans that index (its due runs live nowhere else), once per index,
 * not once per NATS. The default index keeps the group it always had ("automations"); other
 * deployments (or test stacks) sharing the NATS get a group of their own.
 */
export function consumerGroup(namespace: string): string {
  return namespace === 'automations' ? 'automations' : `automations-${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
