import { env, serviceConfig } from '@workspace/platform';
import { z } from 'zod';

export const configSchema = serviceConfig({ grpc: 50053, metrics: 9467 }).extend({
  /** Dedicated Redis connections for WATCH/MULTI transactions (per replica). */
  REDIS_TX_CONNECTIONS: env.positiveInt(8),
  PROJECTS_ADDR: env.address('127.0.0.1:50051'),
  /** The files service, which copies knowledge files into storage owned by the Agent. */
  FILES_ADDR: env.address('127.0.0.1:50052'),
  /** Deadline of one knowledge copy call: it reads every byte of up to 20 files to hash them. */
  KNOWLEDGE_DEADLINE_MS: env.positiveInt(60_000),
  /** Configs kept per Agent; beyond it the oldest that are neither current nor pinned by a chat go. */
  CONFIG_RETENTION: env.positiveInt(100),
  /** The most Agents one user may have (docs/api/usage.md#quotas); a create beyond it → 403 QUOTA_EXCEEDED. */
  MAX_AGENTS: env.positiveInt(1_000),
  /** The most aliases one Agent may have (docs/api/agents.md#aliases, docs/api/usage.md#quotas); one more → 403 QUOTA_EXCEEDED. */
  MAX_ALIASES_PER_AGENT: env.positiveInt(20),
});

export type AgentsConfig = z.output<typeof configSchema>;
