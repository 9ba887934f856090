import { AesGcmSecretBox, defineService, type Metrics } from '@workspace/platform';
import { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { AutomationsServiceService } from '@workspace/proto/workspace/automations/v1/automations';
import { GrpcAgentDirectory } from './adapters/agents.grpc.js';
import { RedisDueIndex } from './adapters/due-index.redis.js';
import { RedisScheduleRepo } from './adapters/schedule-repo.redis.js';
import { RedisTriggerRepo } from './adapters/trigger-repo.redis.js';
import { removeAgent } from './domain/cascade.js';
import type { AgentDirectory } from './domain/ports.js';
import { Scheduler, type RunOutcome } from './domain/scheduler.js';
import { Schedules } from './domain/schedules.js';
import { Triggers } from './domain/triggers.js';
import { configSchema, consumerGroup } from './config.js';
import { automationsHandlers } from './grpc/automations.handlers.js';

function runObserver(metrics: Metrics) {
  const runs = metrics.counter('automations_runs_total', 'Due schedule runs, by outcome (started, retried, failed, skipped, taken by another replica, alias-gone)', ['outcome']);
  const late = metrics.histogram('automations_run_lateness_seconds', 'How long after its due time a run started its chat');
  return (outcome: RunOutcome, lateMs: number) => {
    runs.inc({ outcome });
    if (outcome === 'started') late.observe(lateMs / 1000);
  };
}

/**
 * The automations service: schedules (and running them when due) and inbound webhook triggers
 * in Redis; `agent.deleted` removes an Agent's. Readiness follows Redis only: with NATS down
 * the API still works and the cascade catches up later.
 */
export const automationsService = defineService({
  name: 'automations',
  config: configSchema,
  deps: {
    /** Agent lookups and chat starts. */
    agents: (ctx): AgentDirectory =>
      new GrpcAgentDirectory(
        // Safe to repeat on another replica: a lookup, and CreateChat, which every call from here
        // sends with an idempotency key (a repeat returns the first call's chat).
        ctx.client(AgentsServiceService, { serviceName: 'agents', address: ctx.config.AGENTS_ADDR, idempotent: ['getAgent', 'resolveAlias', 'createChat'] }),
      ),
    /** Keeps this instance's keys and consumer group apart from others on the same Redis and NATS (tests). */
    dueNamespace: (ctx): string => ctx.config.DUE_INDEX_NAMESPACE,
  },
  build(ctx, { agents, dueNamespace }) {
    const { redis, logger, metrics } = ctx;
    const dueIndex = new RedisDueIndex(redis, dueNamespace);
    const scheduleRepo = new RedisScheduleRepo(redis, dueIndex, dueNamespace);
    const triggerRepo = new RedisTriggerRepo(redis, dueNamespace);
    const box = new AesGcmSecretBox(ctx.config.TRIGGER_SECRET_KEY);
    if (!box.sealing) logger.warn('TRIGGER_SECRET_KEY is not set: webhook secrets are stored unencrypted in Redis');
    const schedules = new Schedules({ repo: scheduleRepo, agents, maxPerAgent: ctx.config.MAX_SCHEDULES_PER_AGENT });
    const aliasGone = metrics.counter('automations_alias_gone_total', 'Webhook calls that started no chat because the alias their trigger runs through is gone');
    const onAliasGone = (run: { triggerId: string; agentId: string; alias: string }) => {
      logger.warn(run, 'webhook call started no chat: its alias is gone');
      aliasGone.inc();
    };
    const triggers = new Triggers({ repo: triggerRepo, agents, box, maxPerAgent: ctx.config.MAX_TRIGGERS_PER_AGENT, onAliasGone });
    const scheduler = new Scheduler({ due: dueIndex, schedules: scheduleRepo, agents, logger, tickMs: ctx.config.SCHEDULER_TICK_MS, leaseMs: ctx.config.SCHEDULER_LEASE_MS, observe: runObserver(metrics) });
    ctx.background('scheduler', scheduler);
    ctx.consume({ 'agent.deleted': (event) => removeAgent({ schedules: scheduleRepo, triggers: triggerRepo }, event.data.userId, event.data.agentId) }, consumerGroup(dueNamespace));
    ctx.serve(AutomationsServiceService, automationsHandlers({ schedules, triggers }));
    metrics.sampled('automations_overdue_runs', 'Schedule runs past their due time and not yet claimed', 'service', async () => ({ automations: await dueIndex.overdue() }));
  },
});
