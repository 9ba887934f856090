import { errors, type RedisClient, type RedisOutbox, type WorkspaceEvent } from '@workspace/platform';
import type { AgentConfig, AgentRecord, AgentRepo, ChatRecord, CommitConfigRequest, CommitResult } from '../domain/ports.js';
import { decodeAgent, encodeAgent, encodeSummary } from './agent-codec.js';
import { RedisAgentReads } from './agent-reads.redis.js';
import { idOfMember, indexMember, keysOf } from './keys.js';
import { WatchPool, type Plan } from './watch-pool.js';

/** Conflicts with unrelated writers (a chat starting) are retried this often before giving up. */
const MAX_ATTEMPTS = 50;

export interface RedisAgentRepoOptions {
  redis: RedisClient;
  outbox: RedisOutbox;
  /** Called after a commit that queued events to the outbox of `tag` (wakes the relay). */
  onEvents?: (tag: string) => void;
  /** Dedicated connections for WATCH/MULTI. */
  poolSize?: number;
}

/**
 * Agents, configs and chats of a user in Redis, all under the user's hash tag. Writes are
 * optimistic transactions (WATCH the Agent hash, read, MULTI/EXEC) on dedicated connections;
 * every write touches the Agent hash, so watching it alone orders all writes of one Agent.
 */
export class RedisAgentRepo extends RedisAgentReads implements AgentRepo {
  readonly #outbox: RedisOutbox;
  readonly #pool: WatchPool;
  readonly #onEvents: (tag: string) => void;

  constructor(options: RedisAgentRepoOptions) {
    super(options.redis);
    this.#outbox = options.outbox;
    this.#pool = new WatchPool(options.redis, options.poolSize);
    this.#onEvents = options.onEvents ?? (() => undefined);
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async create(userId: string, agent: AgentRecord, config: AgentConfig, events: WorkspaceEvent[]): Promise<void> {
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    // New ids: nothing to watch. MULTI alone makes the records, the index entry and the events one write.
    const tx = this.redis.multi();
    tx.hset(k.agent(agent.agentId), { ...encodeAgent(agent), configSeq: '1' });
    tx.set(k.config(config.configId), JSON.stringify(config));
    tx.zadd(k.configs(agent.agentId), 1, config.configId);
    tx.zadd(k.index, 0, indexMember(agent.createdAt, agent.agentId));
    this.#outbox.append(tx, k.tag, events);
    const results = await tx.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error('agent create transaction was discarded');
    this.#onEvents(k.tag);
  }

  async commitConfig(userId: string, request: CommitConfigRequest): Promise<CommitResult> {
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    const { agentId, baseConfigId, config } = request;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let expired: string[] = [];
      const { committed, value } = await this.#pool.run<CommitResult>([k.agent(agentId)], async (conn) => {
        const hash = await conn.hgetall(k.agent(agentId));
        const agent = decodeAgent(hash);
        if (!agent) return { value: { status: 'gone' } };
        if (agent.currentConfigId !== baseConfigId) return { value: { status: 'stale', currentConfigId: agent.currentConfigId } };
        const [stored, pins] = await Promise.all([conn.zrange(k.configs(agentId), '0', '-1'), conn.hgetall(k.pins(agentId))]);
        const pinned = new Set(Object.entries(pins).filter(([, n]) => Number(n) > 0).map(([id]) => id));
        expired = request.expire([...stored, config.configId], pinned);
        const seq = Number(hash.configSeq ?? stored.length) + 1;
        const next: AgentRecord = { ...agent, currentConfigId: config.configId, updatedAt: config.createdAt, summary: request.summary };
        return {
          value: { status: 'committed', agent: next },
          write: (tx) => {
            tx.set(k.config(config.configId), JSON.stringify(config));
            tx.zadd(k.configs(agentId), seq, config.configId);
            tx.hset(k.agent(agentId), { currentConfigId: config.configId, updatedAt: config.createdAt, configSeq: String(seq), ...encodeSummary(request.summary) });
            if (expired.length > 0) {
              tx.del(...expired.map((id) => k.config(id)));
              tx.zrem(k.configs(agentId), ...expired);
            }
            this.#outbox.append(tx, k.tag, request.events);
          },
        };
      });
      if (committed) {
        if (value.status === 'committed') {
          this.forgetConfigs(userId, expired);
          this.#onEvents(k.tag);
        }
        return value;
      }
      // A watched write won. If it moved the config, this update is stale; if it was a chat, go again.
    }
    throw errors.unavailable('the agent store (too much contention)');
  }

  async delete(userId: string, agentId: string, events: WorkspaceEvent[]): Promise<boolean> {
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    let configIds: string[] = [];
    const deleted = await this.#retry(k.agent(agentId), async (conn) => {
      const agent = decodeAgent(await conn.hgetall(k.agent(agentId)));
      if (!agent) return { value: false };
      let chatMembers: string[];
      [configIds, chatMembers] = await Promise.all([conn.zrange(k.configs(agentId), '0', '-1'), conn.zrange(k.chats(agentId), '0', '-1')]);
      return {
        value: true,
        write: (tx) => {
          tx.del(k.agent(agentId), k.configs(agentId), k.pins(agentId), k.chats(agentId));
          if (configIds.length > 0) tx.del(...configIds.map((id) => k.config(id)));
          if (chatMembers.length > 0) tx.del(...chatMembers.map((m) => k.chat(idOfMember(m))));
          tx.zrem(k.index, indexMember(agent.createdAt, agentId));
          this.#outbox.append(tx, k.tag, events);
        },
      };
    });
    if (deleted) {
      this.forgetConfigs(userId, configIds);
      this.#onEvents(k.tag);
    }
    return deleted;
  }

  async createChat(userId: string, agentId: string, make: (agent: AgentRecord) => { chat: ChatRecord; events: WorkspaceEvent[] }): Promise<ChatRecord | undefined> {
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    const chat = await this.#retry(k.agent(agentId), async (conn) => {
      const agent = decodeAgent(await conn.hgetall(k.agent(agentId)));
      if (!agent) return { value: undefined };
      const { chat: record, events } = make(agent);
      // Replicas' clocks differ a little: lastChatAt never moves backwards.
      const lastChatAt = agent.lastChatAt && agent.lastChatAt > record.createdAt ? agent.lastChatAt : record.createdAt;
      return {
        value: record,
        write: (tx) => {
          tx.set(k.chat(record.chatId), JSON.stringify(record));
          tx.zadd(k.chats(agentId), 0, indexMember(record.createdAt, record.chatId));
          tx.hincrby(k.agent(agentId), 'chatCount', 1);
          tx.hset(k.agent(agentId), 'lastChatAt', lastChatAt);
          tx.hincrby(k.pins(agentId), record.configId, 1);
          this.#outbox.append(tx, k.tag, events);
        },
      };
    });
    if (chat) this.#onEvents(k.tag);
    return chat;
  }

  /** Runs a transaction until it commits; conflicts only mean "someone else wrote first, look again". */
  async #retry<T>(watchKey: string, plan: (conn: RedisClient) => Promise<Plan<T>>): Promise<T> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { committed, value } = await this.#pool.run<T>([watchKey], plan);
      if (committed) return value;
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
    }
    throw errors.unavailable('the agent store (too much contention)');
  }
}
