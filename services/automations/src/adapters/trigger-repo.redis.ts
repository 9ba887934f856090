import type { RedisClient } from '@workspace/platform';
import type { CreateOutcome, StoredTrigger, TriggerRecord, TriggerRepo } from '../domain/ports.js';
import { CREATE_UNLESS_DELETED, createOutcome, DEFAULT_NAMESPACE, triggerOwnerKey, userKeys } from './keys.js';
import { tombstoneAgent } from './tombstones.redis.js';

/**
 * Triggers in Redis: the user's records (one hash tag) and, per trigger, the global owner key
 * the hook starts from (its own slot). No transaction spans both, so the order keeps every
 * interrupted write harmless: create writes the owner key first (a key without a record only
 * makes the hook answer 404); deletes remove the owner keys first and the records last, so a
 * retry still finds what is left.
 */
export class RedisTriggerRepo implements TriggerRepo {
  readonly #redis: RedisClient;
  readonly #namespace: string;

  constructor(redis: RedisClient, namespace = DEFAULT_NAMESPACE) {
    this.#redis = redis;
    this.#namespace = namespace;
  }

  #keys(userId: string) {
    return userKeys(userId, this.#namespace);
  }

  #owner(triggerId: string): string {
    return triggerOwnerKey(triggerId, this.#namespace);
  }

  async create(userId: string, t: StoredTrigger, max = 0): Promise<CreateOutcome> {
    const keys = this.#keys(userId);
    await this.#redis.set(this.#owner(t.triggerId), userId);
    const args = [t.agentId, JSON.stringify(t), String(Date.parse(t.createdAt)), t.triggerId, String(max)];
    const outcome = createOutcome(await this.#redis.eval(CREATE_UNLESS_DELETED, 3, keys.trigger(t.triggerId), keys.triggers(t.agentId), keys.deletedAgents, ...args));
    if (outcome.status !== 'created') await this.#redis.del(this.#owner(t.triggerId));
    return outcome;
  }

  async list(userId: string, agentId: string): Promise<TriggerRecord[]> {
    const keys = this.#keys(userId);
    const ids = await this.#redis.zrevrange(keys.triggers(agentId), 0, -1);
    if (ids.length === 0) return [];
    const raw = await this.#redis.mget(...ids.map((id) => keys.trigger(id)));
    return raw.filter((r): r is string => r !== null).map((r) => withoutSecret(JSON.parse(r) as StoredTrigger));
  }

  async get(userId: string, triggerId: string): Promise<StoredTrigger | undefined> {
    const raw = await this.#redis.get(this.#keys(userId).trigger(triggerId));
    return raw === null ? undefined : (JSON.parse(raw) as StoredTrigger);
  }

  async ownerOf(triggerId: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#owner(triggerId))) ?? undefined;
  }

  async delete(userId: string, t: TriggerRecord): Promise<void> {
    const keys = this.#keys(userId);
    await this.#redis.del(this.#owner(t.triggerId));
    await this.#redis.multi().del(keys.trigger(t.triggerId)).zrem(keys.triggers(t.agentId), t.triggerId).exec();
  }

  async deleteAgent(userId: string, agentId: string): Promise<void> {
    const keys = this.#keys(userId);
    await tombstoneAgent(this.#redis, keys.deletedAgents, agentId);
    const ids = await this.#redis.zrange(keys.triggers(agentId), '0', '-1');
    // One DEL per key: on Redis Cluster each owner key is in a slot of its own.
    await Promise.all(ids.map((id) => this.#redis.del(this.#owner(id))));
    const multi = this.#redis.multi();
    for (const id of ids) multi.del(keys.trigger(id));
    await multi.del(keys.triggers(agentId)).exec();
  }
}

function withoutSecret(t: StoredTrigger): TriggerRecord {
  return { triggerId: t.triggerId, agentId: t.agentId, name: t.name, createdAt: t.createdAt, alias: t.alias ?? null };
}
