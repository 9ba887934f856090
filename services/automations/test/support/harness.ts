import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger, createRedis, errors, type RedisClient } from '@workspace/platform';
import { RedisDueIndex } from '../../src/adapters/due-index.redis.js';
import { RedisScheduleRepo } from '../../src/adapters/schedule-repo.redis.js';
import { AesGcmSecretBox } from '../../src/adapters/secret-box.js';
import { RedisTriggerRepo } from '../../src/adapters/trigger-repo.redis.js';
import type { AgentDirectory, Scope } from '../../src/domain/ports.js';
import { Scheduler, type RunOutcome } from '../../src/domain/scheduler.js';
import { Schedules } from '../../src/domain/schedules.js';
import { Triggers } from '../../src/domain/triggers.js';

export const logger = createLogger('automations-test', 'silent');

export interface StartedChat {
  userId: string;
  agentId: string;
  title: string;
  requestId: string | undefined;
  at: number;
}

/**
 * Agents as the agents service would answer for these tests: the Agents added here exist for
 * their user, every started chat is recorded. (Through the real agents service: test/automations.e2e.test.ts.)
 */
export class RecordingAgents implements AgentDirectory {
  readonly #agents = new Set<string>();
  readonly chats: StartedChat[] = [];

  /** A new Agent of `userId`. */
  add(userId: string): string {
    const agentId = `agt_${randomBytes(16).toString('hex')}`;
    this.#agents.add(`${userId}\n${agentId}`);
    return agentId;
  }

  remove(userId: string, agentId: string): void {
    this.#agents.delete(`${userId}\n${agentId}`);
  }

  async require(scope: Scope, agentId: string): Promise<void> {
    if (!this.#agents.has(`${scope.userId}\n${agentId}`)) throw errors.notFound('agent', agentId);
  }

  async startChat(scope: Scope, agentId: string, title: string): Promise<string> {
    await this.require(scope, agentId);
    this.chats.push({ userId: scope.userId, agentId, title, requestId: scope.requestId, at: Date.now() });
    return `cht_${randomUUID().replaceAll('-', '')}`;
  }
}

export interface Harness {
  redis: RedisClient;
  due: RedisDueIndex;
  scheduleRepo: RedisScheduleRepo;
  triggerRepo: RedisTriggerRepo;
  agents: RecordingAgents;
  schedules: Schedules;
  triggers: Triggers;
  /** A scheduler on its own Redis connection, as another replica would have. */
  scheduler(options?: { tickMs?: number; leaseMs?: number; batch?: number; observe?: (outcome: RunOutcome) => void }): Scheduler;
  close(): Promise<void>;
}

/** The service's domain and repositories over a real Redis, with a due index of their own. */
export function harness(options: { url: string; cluster?: boolean; secretKey?: Buffer }): Harness {
  const namespace = `automations-test-${randomUUID()}`;
  const connect = (name: string) => createRedis({ url: options.url, cluster: options.cluster ?? false, name });
  const redis = connect('automations-test');
  const due = new RedisDueIndex(redis, namespace);
  const scheduleRepo = new RedisScheduleRepo(redis, due);
  const triggerRepo = new RedisTriggerRepo(redis);
  const agents = new RecordingAgents();
  const extra: RedisClient[] = [];
  const schedulers: Scheduler[] = [];
  return {
    redis,
    due,
    scheduleRepo,
    triggerRepo,
    agents,
    schedules: new Schedules({ repo: scheduleRepo, agents }),
    triggers: new Triggers({ repo: triggerRepo, agents, box: new AesGcmSecretBox(options.secretKey) }),
    scheduler: (o = {}) => {
      const own = connect('automations-test-replica');
      extra.push(own);
      const s = new Scheduler({ due: new RedisDueIndex(own, namespace), schedules: new RedisScheduleRepo(own, due), agents, logger, tickMs: o.tickMs ?? 20, ...(o.leaseMs && { leaseMs: o.leaseMs }), ...(o.batch && { batch: o.batch }), ...(o.observe && { observe: o.observe }) });
      schedulers.push(s);
      return s;
    },
    close: async () => {
      await Promise.all(schedulers.map((s) => s.stop()));
      await redis.del(due.keys.index, due.keys.runs);
      await Promise.all([...extra, redis].map((r) => r.quit()));
    },
  };
}
