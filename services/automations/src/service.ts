import { EventConsumer } from '@workspace/events';
import { GrpcServer, HealthReporter, type Logger, type Metrics, type RedisClient } from '@workspace/platform';
import { AutomationsServiceService } from '@workspace/proto/workspace/automations/v1/automations';
import { RedisDueIndex } from './adapters/due-index.redis.js';
import { withUnavailableErrors } from '@workspace/platform';
import { RedisScheduleRepo } from './adapters/schedule-repo.redis.js';
import { AesGcmSecretBox } from './adapters/secret-box.js';
import { RedisTriggerRepo } from './adapters/trigger-repo.redis.js';
import { removeAgent } from './domain/cascade.js';
import type { AgentDirectory } from './domain/ports.js';
import { Scheduler, type RunOutcome } from './domain/scheduler.js';
import { Schedules } from './domain/schedules.js';
import { Triggers } from './domain/triggers.js';
import { automationsHandlers } from './grpc/automations.handlers.js';

export interface AutomationsServiceOptions {
  redis: RedisClient;
  logger: Logger;
  host: string;
  port: number;
  /** Agent lookups and chat starts (the agents service over gRPC in production). */
  agents: AgentDirectory;
  /** NATS with JetStream for `agent.deleted`; without it there is no cascade (tests of one part). */
  natsUrl?: string;
  /** Pause between scheduler passes; 0 runs no scheduler in this process. */
  tickMs: number;
  /** 32-byte key sealing webhook secrets at rest; without it they are stored as they are. */
  secretKey?: Buffer | undefined;
  metrics?: Metrics;
  /** Keeps this service's due index apart from others on the same Redis (tests); default `automations`. */
  dueNamespace?: string;
}

function runObserver(metrics: Metrics | undefined) {
  if (!metrics) return undefined;
  const runs = metrics.counter('automations_runs_total', 'Due schedule runs, by outcome (started, failed, skipped, taken by another replica)', ['outcome']);
  const late = metrics.histogram('automations_run_lateness_seconds', 'How long after its due time a run started its chat');
  return (outcome: RunOutcome, lateMs: number) => {
    runs.inc({ outcome });
    if (outcome === 'started') late.observe(lateMs / 1000);
  };
}

/** Wires the automations service: gRPC API, scheduler loop, `agent.deleted` consumer; resolves once it listens. */
export async function startAutomationsService(options: AutomationsServiceOptions) {
  const { redis, logger } = options;
  const dueIndex = new RedisDueIndex(redis, options.dueNamespace);
  const due = withUnavailableErrors(dueIndex, 'the automations store');
  const scheduleRepo = withUnavailableErrors(new RedisScheduleRepo(redis, dueIndex), 'the automations store');
  const triggerRepo = withUnavailableErrors(new RedisTriggerRepo(redis), 'the automations store');
  const box = new AesGcmSecretBox(options.secretKey);
  if (!box.sealing) logger.warn('TRIGGER_SECRET_KEY is not set: webhook secrets are stored unencrypted in Redis');
  const schedules = new Schedules({ repo: scheduleRepo, agents: options.agents });
  const triggers = new Triggers({ repo: triggerRepo, agents: options.agents, box });
  const scheduler = new Scheduler({ due, schedules: scheduleRepo, agents: options.agents, logger, tickMs: options.tickMs, observe: runObserver(options.metrics) });
  const consumer = options.natsUrl
    ? new EventConsumer({
        url: options.natsUrl,
        logger,
        service: 'automations',
        handlers: { 'agent.deleted': (event) => removeAgent({ schedules: scheduleRepo, triggers: triggerRepo }, event.data.userId, event.data.agentId) },
      })
    : undefined;
  const grpc = new GrpcServer(logger, { observe: options.metrics?.grpcObserver() }).add(AutomationsServiceService, automationsHandlers({ schedules, triggers }));
  // Readiness follows Redis only: with NATS down the API still works and the cascade catches up later.
  const health = new HealthReporter({ logger, probe: async () => void (await redis.ping()) });
  health.addTo(grpc.server);
  const port = await grpc.listen(options.host, options.port);
  await health.start();
  if (options.tickMs > 0) scheduler.start();
  void consumer?.start();
  options.metrics?.sampled('automations_overdue_runs', 'Schedule runs past their due time and not yet claimed', 'service', async () => ({ automations: await dueIndex.overdue() }));
  if (consumer) options.metrics?.sampled('nats_consumer_pending', 'Events not yet handled (pending + unacknowledged), by durable consumer', 'durable', () => consumer.pending());
  return {
    port,
    scheduler,
    /** Events not yet handled and acknowledged by this service's durables (0 without NATS). */
    eventsPending: async () => Object.values((await consumer?.pending()) ?? {}).reduce((a, b) => a + b, 0),
    /** Readiness off, drain calls, stop the scheduler and the consumer; the caller closes its clients. */
    stop: async (graceMs: number) => {
      health.stop();
      await grpc.drain(graceMs);
      await scheduler.stop();
      await consumer?.stop();
    },
  };
}
