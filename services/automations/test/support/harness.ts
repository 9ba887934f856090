import { randomBytes, randomUUID } from 'node:crypto';
import { AesGcmSecretBox, createLogger, createRedis, errors, type RedisClient } from '@workspace/platform';
import { RedisDueIndex } from '../../src/adapters/due-index.redis.js';
import { RedisScheduleRepo } from '../../src/adapters/schedule-repo.redis.js';
import { RedisTriggerRepo } from '../../src/adapters/trigger-repo.redis.js';
import type { AgentDirectory, Scope } from '../../src/domain/ports.js';
import { Scheduler, type RunOutcome } from '../../src/domain/scheduler.js';
import { Schedules } from '../../src/domain/schedules.js';
import { Triggers } from '../../src/domain/triggers.js';

export const logger = createLogger('automations-test', 'silent');

export interface StartedChat {
  chatId: string;
  userId: string;
  agentId: string;
  title: string;
  idempotencyKey: string;
  requestId: string | undefined;
  at: number;
}

/**
 * Agents as the agents service would answer for these tests: the Agents added here exist for
 * their user; a chat starts once per idempotency key (per user and Agent), and a repeat gets the
 * first one's id, as CreateChat does (tested against the real code in services/agents/test).
 * `chats` records each chat started, `calls` the idempotency key of every call. (Through the real agents service:
 * test/automations.e2e.test.ts and test/schedules-exactly-once.e2e.test.ts.)
 */
export class RecordingAgents implements AgentDirectory {
  readonly #agents = new Set<string>();
  readonly #byKey = new Map<string, string>();
  readonly chats: StartedChat[] = [];
  readonly calls: string[] = [];

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

  async startChat(scope: Scope, chat: { agentId: string; title: string; idempotencyKey: string }): Promise<string> {
    this.calls.push(chat.idempotencyKey);
    await this.require(scope, chat.agentId);
    const key = `${scope.userId}\n${chat.agentId}\n${chat.idempotencyKey}`;
    const earlier = this.#byKey.get(key);
    if (earlier) return earlier;
    const chatId = `cht_${randomUUID().replaceAll('-', '')}`;
    this.#byKey.set(key, chatId);
    this.chats.push({ chatId, userId: scope.userId, ...chat, requestId: scope.requestId, at: Date.now() });
    return chatId;
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
  /** A scheduler on its own Redis connection, as another replica would have; `agents` replaces the recording directory. */
  scheduler(options?: { tickMs?: number; leaseMs?: number; batch?: number; observe?: (outcome: RunOutcome) => void; agents?: AgentDirectory }): Scheduler;
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
      const s = new Scheduler({ due: new RedisDueIndex(own, namespace), schedules: new RedisScheduleRepo(own, due), agents: o.agents ?? agents, logger, tickMs: o.tickMs ?? 20, ...(o.leaseMs && { leaseMs: o.leaseMs }), ...(o.batch && { batch: o.batch }), ...(o.observe && { observe: o.observe }) });
      schedulers.push(s);
      return s;
    },
    close: async () => {
      await Promise.all(schedulers.map((s) => s.stop()));
      await redis.del(due.keys.index, due.keys.runs, due.keys.inflight);
      await Promise.all([...extra, redis].map((r) => r.quit()));
    },
  };
}
