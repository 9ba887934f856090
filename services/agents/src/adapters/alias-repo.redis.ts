import type { RedisClient } from '@workspace/platform';
import type { AliasHistoryEntry, AliasRecord, AliasRepo, AliasStats, PutAliasOutcome, PutAliasRequest } from '../domain/alias-ports.js';
import type { RouteEntry } from '../domain/rollout.js';
import { DELETE_ALIAS, PUT_ALIAS } from './aliases.lua.js';
import { keysOf } from './keys.js';

/** Periods of an alias kept in its history; older ones are dropped. */
export const ALIAS_HISTORY_KEPT = 100;

function aliasKeys(userId: string, agentId: string): string[] {
  const k = keysOf(userId);
  return [k.agent(agentId), k.configs(agentId), k.aliases(agentId), k.aliasHistory(agentId), k.pins(agentId), k.aliasStats(agentId)];
}

/** The stats field of chats through `alias` on `configId` (see keys.aliasStats). */
export function aliasStatsField(alias: string, configId: string): string {
  return `${alias}|${configId}`;
}

type StoredRecord = Omit<AliasRecord, 'routing'> & { routing?: RouteEntry[] | null };
type StoredPeriod = { configId: string; routing?: RouteEntry[] | null; from: string };

/** A stored record as the API shows it: records written before routing existed have none. */
export function decodeAlias(raw: string): AliasRecord {
  const r = JSON.parse(raw) as StoredRecord;
  return { alias: r.alias, agentId: r.agentId, configId: r.configId, description: r.description, createdAt: r.createdAt, updatedAt: r.updatedAt, routing: routingOf(r.routing) };
}

function routingOf(routing: RouteEntry[] | null | undefined): RouteEntry[] | null {
  return Array.isArray(routing) && routing.length > 0 ? routing.map((e) => ({ configId: e.configId, weight: e.weight })) : null;
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
    const routing = r.routing === null ? '' : JSON.stringify(r.routing.map((e) => ({ configId: e.configId, weight: e.weight })));
    const args = [r.alias, r.configId, r.description, r.ifMatch ?? '', r.at, String(r.maxAliases), r.agentId, String(ALIAS_HISTORY_KEPT), routing];
    const [status, value] = (await this.#redis.eval(PUT_ALIAS, keys.length, ...keys, ...args)) as [string, string | number | undefined];
    switch (status) {
      case 'created':
      case 'moved':
        return { status, alias: decodeAlias(String(value)) };
      case 'precondition':
        return { status, currentConfigId: value ? String(value) : undefined };
      case 'quota':
        return { status, used: Number(value) };
      case 'agent-gone':
        return { status };
      case 'config-gone':
        return { status, configId: String(value) };
      default:
        throw new Error(`unexpected alias script answer ${status}`);
    }
  }

  async get(userId: string, agentId: string, alias: string): Promise<AliasRecord | undefined> {
    const raw = await this.#redis.hget(keysOf(userId).aliases(agentId), alias);
    return raw === null ? undefined : decodeAlias(raw);
  }

  async list(userId: string, agentId: string): Promise<AliasRecord[]> {
    const all = await this.#redis.hvals(keysOf(userId).aliases(agentId));
    return all.map(decodeAlias).sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
  }

  async history(userId: string, agentId: string, alias: string): Promise<AliasHistoryEntry[] | undefined> {
    const raw = await this.#redis.hget(keysOf(userId).aliasHistory(agentId), alias);
    return raw === null ? undefined : periodsOf(raw);
  }

  async stats(userId: string, agentId: string, alias: string): Promise<AliasStats | undefined> {
    const k = keysOf(userId);
    // One MULTI: the record, its periods and the counts as of one moment.
    const answers = await this.#redis.multi().hget(k.aliases(agentId), alias).hget(k.aliasHistory(agentId), alias).hgetall(k.aliasStats(agentId)).exec();
    if (!answers) throw new Error('alias stats transaction aborted');
    for (const [err] of answers) if (err) throw err;
    const [rawRecord, rawHistory, counts] = answers.map(([, value]) => value) as [string | null, string | null, Record<string, string>];
    if (rawRecord === null) return undefined;
    const record = decodeAlias(rawRecord);
    const since = rawHistory === null ? record.updatedAt : (periodsOf(rawHistory)[0]?.from ?? record.updatedAt);
    const entries = record.routing ?? [{ configId: record.configId, weight: 100 }];
    return {
      alias,
      since,
      configs: entries.map((e) => ({ configId: e.configId, weight: e.weight, chats: Number(counts[aliasStatsField(alias, e.configId)] ?? 0) })),
    };
  }

  async delete(userId: string, agentId: string, alias: string): Promise<boolean> {
    const keys = aliasKeys(userId, agentId);
    return (await this.#redis.eval(DELETE_ALIAS, keys.length, ...keys, alias)) === 1;
  }
}

/** Newest first; each period ends when the next (newer) one began. */
function periodsOf(raw: string): AliasHistoryEntry[] {
  const periods = JSON.parse(raw) as StoredPeriod[];
  return periods.map((p, i) => ({ configId: p.configId, routing: routingOf(p.routing), from: p.from, until: i === 0 ? null : periods[i - 1]!.from }));
}
