import type { RedisClient } from '@workspace/platform';
import type { AliasHistoryEntry, AliasRecord, AliasRepo, PutAliasOutcome, PutAliasRequest } from '../domain/alias-ports.js';
import { DELETE_ALIAS, PUT_ALIAS } from './aliases.lua.js';
import { keysOf } from './keys.js';

/** Periods of an alias kept in its history; older ones are dropped. */
export const ALIAS_HISTORY_KEPT = 100;

function aliasKeys(userId: string, agentId: string): string[] {
  const k = keysOf(userId);
  return [k.agent(agentId), k.configs(agentId), k.aliases(agentId), k.aliasHistory(agentId), k.pins(agentId)];
}

/** Aliases in the agents service's Redis, beside the Agent they belong to (one hash tag). */
export class RedisAliasRepo implements AliasRepo {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  async isKept(userId: string, agentId: string, configId: string): Promise<boolean> {
    return (await this.#redis.zscore(keysOf(userId).configs(agentId), configId)) !== null;
  }

  async keptOldestFirst(userId: string, agentId: string): Promise<string[]> {
    return this.#redis.zrange(keysOf(userId).configs(agentId), '0', '-1');
  }

  async put(r: PutAliasRequest): Promise<PutAliasOutcome> {
    const keys = aliasKeys(r.userId, r.agentId);
    const args = [r.alias, r.configId, r.description, r.ifMatch ?? '', r.at, String(r.maxAliases), r.agentId, String(ALIAS_HISTORY_KEPT)];
    const [status, value] = (await this.#redis.eval(PUT_ALIAS, keys.length, ...keys, ...args)) as [string, string | number | undefined];
    switch (status) {
      case 'created':
      case 'moved':
        return { status, alias: JSON.parse(String(value)) as AliasRecord };
      case 'precondition':
        return { status, currentConfigId: value ? String(value) : undefined };
      case 'quota':
        return { status, used: Number(value) };
      case 'agent-gone':
      case 'config-gone':
        return { status };
      default:
        throw new Error(`unexpected alias script answer ${status}`);
    }
  }

  async get(userId: string, agentId: string, alias: string): Promise<AliasRecord | undefined> {
    const raw = await this.#redis.hget(keysOf(userId).aliases(agentId), alias);
    return raw === null ? undefined : (JSON.parse(raw) as AliasRecord);
  }

  async list(userId: string, agentId: string): Promise<AliasRecord[]> {
    const all = await this.#redis.hvals(keysOf(userId).aliases(agentId));
    return all.map((raw) => JSON.parse(raw) as AliasRecord).sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
  }

  async history(userId: string, agentId: string, alias: string): Promise<AliasHistoryEntry[] | undefined> {
    const raw = await this.#redis.hget(keysOf(userId).aliasHistory(agentId), alias);
    if (raw === null) return undefined;
    const periods = JSON.parse(raw) as { configId: string; from: string }[];
    // Each period ends when the next (newer) one began.
    return periods.map((p, i) => ({ configId: p.configId, from: p.from, until: i === 0 ? null : periods[i - 1]!.from }));
  }

  async delete(userId: string, agentId: string, alias: string): Promise<boolean> {
    const keys = aliasKeys(userId, agentId);
    return (await this.#redis.eval(DELETE_ALIAS, keys.length, ...keys, alias)) === 1;
  }
}
