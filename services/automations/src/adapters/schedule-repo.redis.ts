import type { RedisClient } from '@workspace/platform';
import type { CreateOutcome, Schedule, ScheduleRecord, ScheduleRepo, ScheduleSummary } from '../domain/ports.js';
import type { RedisDueIndex } from './due-index.redis.js';
import { CREATE_UNLESS_DELETED, createOutcome, DEFAULT_NAMESPACE, userKeys } from './keys.js';
import { tombstoneAgent } from './tombstones.redis.js';

/**
 * Schedules in Redis: the user's records (one hash tag) and the global due index. A write
 * touches both, which can sit on different Cluster slots, so no transaction spans them; the
 * order makes every interrupted write harmless instead. Create writes the due entry first
 * (the scheduler drops an entry whose record never came, see planRun); delete removes the due
 * entry first (a retry of the delete finishes it). Enabled ⇔ in the due index: schedules are
 * immutable and a 5-field cron always has a next run.
 */
export class RedisScheduleRepo implements ScheduleRepo {
  readonly #redis: RedisClient;
  readonly #due: RedisDueIndex;
  readonly #namespace: string;

  constructor(redis: RedisClient, due: RedisDueIndex, namespace = DEFAULT_NAMESPACE) {
    this.#redis = redis;
    this.#due = due;
    this.#namespace = namespace;
  }

  #keys(userId: string) {
    return userKeys(userId, this.#namespace);
  }

  async create(userId: string, s: ScheduleRecord, nextRunAt: number | null, max = 0): Promise<CreateOutcome> {
    const keys = this.#keys(userId);
    if (nextRunAt !== null) await this.#due.add(s.scheduleId, { userId, agentId: s.agentId, cron: s.cron, timezone: s.timezone, createdAt: s.createdAt, alias: s.alias ?? null }, nextRunAt);
    const args = [s.agentId, JSON.stringify(s), String(Date.parse(s.createdAt)), s.scheduleId, String(max)];
    const outcome = createOutcome(await this.#redis.eval(CREATE_UNLESS_DELETED, 3, keys.schedule(s.scheduleId), keys.schedules(s.agentId), keys.deletedAgents, ...args));
    if (outcome.status !== 'created') await this.#due.remove([s.scheduleId]);
    return outcome;
  }

  async list(userId: string, agentId: string): Promise<Schedule[]> {
    const keys = this.#keys(userId);
    // Same score (same millisecond) → reverse id order: a stable newest-first.
    const ids = await this.#redis.zrevrange(keys.schedules(agentId), 0, -1);
    if (ids.length === 0) return [];
    const raw = await this.#redis.mget(...ids.map((id) => keys.schedule(id)));
    const records = raw.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as ScheduleRecord);
    const next = await this.#due.nextRuns(records.map((r) => r.scheduleId));
    return records.map((r, i) => ({ ...r, nextRunAt: iso(next[i] ?? null) }));
  }

  async get(userId: string, scheduleId: string): Promise<ScheduleRecord | undefined> {
    const raw = await this.#redis.get(this.#keys(userId).schedule(scheduleId));
    return raw === null ? undefined : (JSON.parse(raw) as ScheduleRecord);
  }

  async exists(userId: string, scheduleId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys(userId).schedule(scheduleId))) === 1;
  }

  async delete(userId: string, s: ScheduleRecord): Promise<void> {
    const keys = this.#keys(userId);
    await this.#due.remove([s.scheduleId]);
    await this.#redis.multi().del(keys.schedule(s.scheduleId)).zrem(keys.schedules(s.agentId), s.scheduleId).exec();
  }

  /** Three round trips whatever the page size: the Agents' ids, then one ZMSCORE over all of them. */
  async summarize(userId: string, agentIds: readonly string[]): Promise<ScheduleSummary[]> {
    if (agentIds.length === 0) return [];
    const keys = this.#keys(userId);
    const pipeline = this.#redis.pipeline();
    for (const agentId of agentIds) pipeline.zrange(keys.schedules(agentId), '0', '-1');
    const perAgent = ((await pipeline.exec()) ?? []).map(([err, ids]) => {
      if (err) throw err;
      return ids as string[];
    });
    const next = await this.#due.nextRuns(perAgent.flat());
    let offset = 0;
    return agentIds.map((agentId, i) => {
      const runs = next.slice(offset, (offset += perAgent[i]!.length)).filter((n): n is number => n !== null);
      return { agentId, activeScheduleCount: runs.length, nextRunAt: iso(runs.length > 0 ? Math.min(...runs) : null) };
    });
  }

  async deleteAgent(userId: string, agentId: string): Promise<void> {
    const keys = this.#keys(userId);
    // Tombstone first: a create after this line is refused, one before it is in the index below.
    await tombstoneAgent(this.#redis, keys.deletedAgents, agentId);
    const ids = await this.#redis.zrange(keys.schedules(agentId), '0', '-1');
    await this.#due.remove(ids);
    const multi = this.#redis.multi();
    for (const id of ids) multi.del(keys.schedule(id));
    await multi.del(keys.schedules(agentId)).exec();
  }
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
