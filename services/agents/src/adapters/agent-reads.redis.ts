import type { RedisClient } from '@workspace/platform';
import type { AgentConfig, AgentRecord, AgentSummary, ChatRecord } from '../domain/ports.js';
import { decodeAgent } from './agent-codec.js';
import { idOfMember, keysOf } from './keys.js';

/** How many index entries a search reads per round trip. */
const SCAN_CHUNK = 500;

type SearchFields = Pick<AgentSummary, 'searchName' | 'searchDescription'>;

/** The read side of the repository: plain reads on the shared client, no transactions. */
export class RedisAgentReads {
  protected readonly redis: RedisClient;

  constructor(redis: RedisClient) {
    this.redis = redis;
  }

  async get(userId: string, agentId: string): Promise<AgentRecord | undefined> {
    return decodeAgent(await this.redis.hgetall(keysOf(userId).agent(agentId)));
  }

  async getConfig(userId: string, configId: string): Promise<AgentConfig | undefined> {
    const raw = await this.redis.get(keysOf(userId).config(configId));
    return raw === null ? undefined : (JSON.parse(raw) as AgentConfig);
  }

  async listVersions(userId: string, agentId: string, limit: number): Promise<AgentConfig[]> {
    const k = keysOf(userId);
    const ids = await this.redis.zrevrange(k.configs(agentId), 0, limit - 1);
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => k.config(id)));
    return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as AgentConfig);
  }

  /** O(log n + limit): a rank range of the index, then one pipelined read per Agent on the page. */
  async page(userId: string, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }> {
    const k = keysOf(userId);
    const total = await this.redis.zcard(k.index);
    if (offset >= total) return { agents: [], total };
    const members = await this.redis.zrevrange(k.index, offset, offset + limit - 1);
    return { agents: await this.#records(userId, members.map(idOfMember)), total };
  }

  /** Walks the index in order, matching each Agent's stored search fields; reads records for the page only. */
  async search(userId: string, matches: (s: SearchFields) => boolean, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }> {
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
