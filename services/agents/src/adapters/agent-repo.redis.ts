import { conflictRetry, type RedisClient, type RedisOutbox, type WorkspaceEvent } from '@workspace/platform';
import type { AgentRecord, AgentRepo, ChatRecord, CommitConfigRequest, CommitResult, CreateAgentOutcome, NewAgent, NewChat } from '../domain/ports.js';
import { decodeAgent, encodeAgent, encodeSummary } from './agent-codec.js';
import { RedisAgentReads } from './agent-reads.redis.js';
import { CREATE_AGENT } from './create-agent.lua.js';
import { aliasStatsField } from './alias-repo.redis.js';
import { aliasedConfig } from './aliased-config.js';
import { idOfMember, indexMember, keysOf, type UserKeys } from './keys.js';
import { queueIndexDrop, queueIndexSet, searchKeysOf } from './search-index.js';
import { WatchPool, type Plan } from './watch-pool.js';

/** The replies of an EXEC without WATCH (never null); the first failed command's error is thrown. */
function execResults(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('transaction aborted');
  const failed = results.find(([err]) => err);
  if (failed) throw failed[0];
  return results.map(([, value]) => value);
}

/** Conflicts with unrelated writers (a chat starting) are retried this often before giving up. */
const MAX_ATTEMPTS = 50;
/** Lost races are run again after a wait drawn from [0, min(50, 2^(n-1)) ms). */
const conflicts = conflictRetry({ maxAttempts: MAX_ATTEMPTS, maxDelayMs: 50, store: 'the agent store' });
/**
 * How long a CreateChat idempotency key remembers its chat: far longer than any caller retries
 * (the scheduler gives a run up a day after its first attempt).
 */
export const CHAT_KEY_TTL_MS = 7 * 24 * 3600_000;
/** How long a CreateAgent idempotency key remembers its Agent: as long as the gateway's records. */
export const AGENT_KEY_TTL_MS = 24 * 3600_000;

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

  async create(request: NewAgent): Promise<CreateAgentOutcome> {
    const { userId, agent, config, events } = request;
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    // One script: the quota check, the idempotency key and every record happen at once, so
    // concurrent creates never pass MAX_AGENTS and one key never makes two Agents.
    const keys = [k.index, k.agent(agent.agentId), k.config(config.configId), k.configs(agent.agentId), this.#outbox.listKey(k.tag)];
    if (request.idempotencyKey !== undefined) keys.push(k.agentByKey(request.idempotencyKey));
    const hash = Object.entries({ ...encodeAgent(agent), configSeq: '1' }).flat();
    const args = [String(request.maxAgents ?? 0), indexMember(agent.createdAt, agent.agentId), config.configId, JSON.stringify(config), agent.agentId, String(AGENT_KEY_TTL_MS), k.agent(''), String(hash.length), ...hash, ...this.#outbox.encode(events)];
    // The `q` index joins the create in one MULTI; its script indexes only an Agent the create made.
    const tx = this.redis.multi().eval(CREATE_AGENT, keys.length, ...keys, ...args);
    queueIndexSet(tx, searchKeysOf(userId), k.agent(agent.agentId), agent.agentId, agent.summary);
    const [status, value] = execResults(await tx.exec())[0] as [number, number | string];
    if (status === 0) return { status: 'quota', used: Number(value) };
    if (status === 2) return { status: 'exists', agentId: String(value) };
    this.#onEvents(k.tag);
    return { status: 'created' };
  }

  async commitConfig(userId: string, request: CommitConfigRequest): Promise<CommitResult> {
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    const { agentId, baseConfigId, config } = request;
    let expired: string[] = [];
    // When a watched write wins: if it moved the config, the next look finds this update stale; if it was a chat, it goes again.
    const value = await conflicts(() =>
      this.#pool.run<CommitResult>([k.agent(agentId)], async (conn) => {
        // Every read in one round trip (a stale or gone Agent wastes two small ones).
        const [hash, stored, pins, indexed] = await Promise.all([
          conn.hgetall(k.agent(agentId)),
          conn.zrange(k.configs(agentId), '0', '-1'),
          conn.hgetall(k.pins(agentId)),
          conn.sismember(searchKeysOf(userId).docs, agentId),
        ]);
        const agent = decodeAgent(hash);
        if (!agent) return { value: { status: 'gone' } };
        if (agent.currentConfigId !== baseConfigId) return { value: { status: 'stale', currentConfigId: agent.currentConfigId } };
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
            queueIndexSet(tx, searchKeysOf(userId), k.agent(agentId), agentId, request.summary, indexed === 1 ? agent.summary : undefined);
          },
        };
      }),
    );
    if (value.status === 'committed') {
      this.forgetConfigs(userId, expired);
      this.#onEvents(k.tag);
    }
    return value;
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
          tx.del(k.agent(agentId), k.configs(agentId), k.pins(agentId), k.chats(agentId), k.aliases(agentId), k.aliasHistory(agentId), k.aliasStats(agentId));
          if (configIds.length > 0) tx.del(...configIds.map((id) => k.config(id)));
          if (chatMembers.length > 0) tx.del(...chatMembers.map((m) => k.chat(idOfMember(m))));
          tx.zrem(k.index, indexMember(agent.createdAt, agentId));
          this.#outbox.append(tx, k.tag, events);
          queueIndexDrop(tx, searchKeysOf(userId), k.agent(agentId), agentId, agent.summary);
        },
      };
    });
    if (deleted) {
      this.forgetConfigs(userId, configIds);
      this.#onEvents(k.tag);
    }
    return deleted;
  }

  async createChat(request: NewChat): Promise<ChatRecord | undefined | null> {
    const { userId, agentId, idempotencyKey, make } = request;
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    const byKey = idempotencyKey === undefined ? undefined : k.chatByKey(agentId, idempotencyKey);
    let fresh = false;
    // Watching the key too: of two calls with one key, the second sees the first's chat on its retry.
    const chat = await this.#retry(byKey ? [k.agent(agentId), byKey] : k.agent(agentId), async (conn) => {
      fresh = false;
      const agent = decodeAgent(await conn.hgetall(k.agent(agentId)));
      if (!agent) return { value: undefined };
      const earlier = byKey ? await this.#chatByKey(conn, k, byKey) : undefined;
      if (earlier) return { value: earlier };
      // Read under the WATCH of the Agent hash, which every alias move bumps: the pin is what the alias names at commit.
      const aliased = request.alias === undefined ? undefined : await aliasedConfig(conn, k, agentId, request.alias, request.pick);
      if (aliased === null) return { value: null };
      const { chat: record, events } = make(agent, aliased);
      // Replicas' clocks differ a little: lastChatAt never moves backwards.
      const lastChatAt = agent.lastChatAt && agent.lastChatAt > record.createdAt ? agent.lastChatAt : record.createdAt;
      fresh = true;
      return {
        value: record,
        write: (tx) => {
          tx.set(k.chat(record.chatId), JSON.stringify(record));
          tx.zadd(k.chats(agentId), 0, indexMember(record.createdAt, record.chatId));
          tx.hincrby(k.agent(agentId), 'chatCount', 1);
          tx.hset(k.agent(agentId), 'lastChatAt', lastChatAt);
          tx.hincrby(k.pins(agentId), record.configId, 1);
          // Counted for the alias's stats; the alias's period cannot change before EXEC (aliasRev is watched).
          if (request.alias !== undefined) tx.hincrby(k.aliasStats(agentId), aliasStatsField(request.alias, record.configId), 1);
          if (byKey) tx.set(byKey, record.chatId, 'PX', CHAT_KEY_TTL_MS);
          this.#outbox.append(tx, k.tag, events);
        },
      };
    });
    if (chat && fresh) this.#onEvents(k.tag);
    return chat;
  }

  /** The chat an earlier create under this idempotency key made, if it is still there. */
  async #chatByKey(conn: RedisClient, k: UserKeys, byKey: string): Promise<ChatRecord | undefined> {
    const chatId = await conn.get(byKey);
    const raw = chatId === null ? null : await conn.get(k.chat(chatId));
    return raw === null ? undefined : (JSON.parse(raw) as ChatRecord);
  }

  /** Runs a transaction until it commits; conflicts only mean "someone else wrote first, look again". */
  async #retry<T>(watchKey: string | string[], plan: (conn: RedisClient) => Promise<Plan<T>>): Promise<T> {
    return conflicts(() => this.#pool.run<T>([watchKey].flat(), plan));
  }
}
