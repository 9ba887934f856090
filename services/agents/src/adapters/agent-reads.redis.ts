import { LRUCache } from 'lru-cache';
import type { RedisClient } from '@workspace/platform';
import type { AgentConfig, AgentRecord, AgentSummary, ChatRecord } from '../domain/ports.js';
import { matchesQuery } from '../domain/agent-list.js';
import { decodeAgent } from './agent-codec.js';
import { AgentSearchIndex } from './agent-search.redis.js';
import { idOfMember, keysOf } from './keys.js';

/** How many index entries a search reads per round trip. */
const SCAN_CHUNK = 500;

type SearchFields = Pick<AgentSummary, 'searchName' | 'searchDescription'>;

/** Configurations kept in memory, by total JSON length. */
const CONFIG_CACHE_BYTES = 32 * 1024 * 1024;

/** Freezes a parsed configuration all the way down: a shared cached copy must never change. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The read side of the repository: plain reads on the shared client, no transactions. */
export class RedisAgentReads {
  protected readonly redis: RedisClient;
  /**
   * Configurations are immutable once written (docs/api/agents.md#configuration), so a copy read
   * once stays right for every replica: reads of one skip Redis after the first. Deleted ones are
   * never asked for (an Agent's current config and chat-pinned ones outlive every read that reaches
   * them).
   */
  readonly #configs = new LRUCache<string, AgentConfig>({ maxSize: CONFIG_CACHE_BYTES });

  readonly #search: AgentSearchIndex;

  constructor(redis: RedisClient) {
    this.redis = redis;
    this.#search = new AgentSearchIndex(redis);
  }

  async get(userId: string, agentId: string): Promise<AgentRecord | undefined> {
    return decodeAgent(await this.redis.hgetall(keysOf(userId).agent(agentId)));
  }

  async getConfig(userId: string, configId: string): Promise<AgentConfig | undefined> {
    const cacheKey = `${userId}\u0000${configId}`;
    const cached = this.#configs.get(cacheKey);
    if (cached) return cached;
    const raw = await this.redis.get(keysOf(userId).config(configId));
    if (raw === null) return undefined;
    const config = deepFreeze(JSON.parse(raw) as AgentConfig);
    this.#configs.set(cacheKey, config, { size: raw.length });
    return config;
  }

  /** Drops configurations this process deleted from the cache (retention, a deleted Agent). */
  protected forgetConfigs(userId: string, configIds: readonly string[]): void {
    for (const id of configIds) this.#configs.delete(`${userId}\u0000${id}`);
  }

  async listVersions(userId: string, agentId: string, limit: number): Promise<AgentConfig[]> {
    const k = keysOf(userId);
    const ids = await this.redis.zrevrange(k.configs(agentId), 0, limit - 1);
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => k.config(id)));
    return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as AgentConfig);
  }

  async count(userId: string): Promise<number> {
    return this.redis.zcard(keysOf(userId).index);
  }

  /** O(log n + limit): a rank range of the index, then one pipelined read per Agent on the page. */
  async page(userId: string, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }> {
    const k = keysOf(userId);
    const total = await this.redis.zcard(k.index);
    if (offset >= total) return { agents: [], total };
    const members = await this.redis.zrevrange(k.index, offset, offset + limit - 1);
    return { agents: await this.#records(userId, members.map(idOfMember)), total };
  }

  /**
   * Agents whose normalized name or description contains `q`, newest first: from the `q` index
   * (one script, see search-index.ts); while the index does not cover the user yet, by a scan,
   * and the index's backfill starts.
   */
  async search(userId: string, q: string, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }> {
    const members = await this.#search.find(userId, q);
    if (!members) {
      this.#search.scheduleBackfill(userId);
      return this.#scan(userId, (s) => matchesQuery(s, q), offset, limit);
    }
    // Members are `<createdAt>|<agentId>` (ASCII): byte order is the list's order, reversed.
    members.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
    return { agents: await this.#records(userId, members.slice(offset, offset + limit).map(idOfMember)), total: members.length };
  }

  /** Walks the index in order, matching each Agent's stored search fields; reads records for the page only. */
  async #scan(userId: string, matches: (s: SearchFields) => boolean, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }> {
    const k = keysOf(userId);
    const onPage: string[] = [];
    let total = 0;
    for (let start = 0; ; start += SCAN_CHUNK) {
      const members = await this.redis.zrevrange(k.index, start, start + SCAN_CHUNK - 1);
      if (members.length === 0) break;
      const ids = members.map(idOfMember);
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.hmget(k.agent(id), 'searchName', 'searchDescription');
      const rows = (await pipeline.exec()) ?? [];
      rows.forEach(([err, row], i) => {
        const [searchName, searchDescription] = (err ? [] : (row as (string | null)[])) as (string | null)[];
        if (searchName === null || searchName === undefined) return; // deleted meanwhile
        if (!matches({ searchName, searchDescription: searchDescription ?? '' })) return;
        if (total >= offset && onPage.length < limit) onPage.push(ids[i]!);
        total++;
      });
      if (members.length < SCAN_CHUNK) break;
    }
    return { agents: await this.#records(userId, onPage), total };
  }

  async listChats(userId: string, agentId: string): Promise<ChatRecord[]> {
    const k = keysOf(userId);
    const members = await this.redis.zrevrange(k.chats(agentId), 0, -1);
    if (members.length === 0) return [];
    const raws = await this.redis.mget(...members.map((m) => k.chat(idOfMember(m))));
    return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as ChatRecord);
  }

  async getChat(userId: string, chatId: string): Promise<ChatRecord | undefined> {
    const raw = await this.redis.get(keysOf(userId).chat(chatId));
    return raw === null ? undefined : (JSON.parse(raw) as ChatRecord);
  }

  /** Records in the given order; one deleted between the index read and now is left out. */
  async #records(userId: string, ids: string[]): Promise<AgentRecord[]> {
    if (ids.length === 0) return [];
    const k = keysOf(userId);
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(k.agent(id));
    const rows = (await pipeline.exec()) ?? [];
    return rows.flatMap(([err, hash]) => {
      if (err) throw err;
      const agent = decodeAgent(hash as Record<string, string>);
      return agent ? [agent] : [];
    });
  }
}
