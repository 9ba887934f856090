import type { RedisClient } from '@workspace/platform';
import type { DueIndex, DueRun } from '../domain/ports.js';
import { dueKeys } from './keys.js';

/**
 * Claims due runs: every entry due by Redis' own clock (so replicas' clocks may disagree) moves to
 * `now + lease`, in one atomic step, and comes back with what it was due at and its run data.
 * An entry without run data is garbage from an interrupted write and is dropped.
 * KEYS: index, runs. ARGV: leaseMs, limit. Returns [lease, id, dueAt, runJson, id, dueAt, runJson…].
 */
const CLAIM = `
local t = redis.call('TIME')
local now = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local lease = string.format('%.0f', tonumber(now) + tonumber(ARGV[1]))
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = { lease }
for i = 1, #due, 2 do
  local run = redis.call('HGET', KEYS[2], due[i])
  if run then
    redis.call('ZADD', KEYS[1], lease, due[i])
    table.insert(out, due[i])
    table.insert(out, due[i + 1])
    table.insert(out, run)
  else
    redis.call('ZREM', KEYS[1], due[i])
  end
end
return out`;

/**
 * Compare-and-set on one entry: moves it to ARGV[3] (or removes it and its run data when
 * ARGV[3] is '') only while it still holds the claim's lease ARGV[2]. A replica whose lease ran
 * out and was taken over, or a schedule deleted meanwhile, gets 0 and starts nothing.
 * KEYS: index, runs. ARGV: scheduleId, leaseUntil, next.
 */
const SETTLE = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not score) or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1`;

/** What a due entry carries so that a run needs none of the user's keys (another slot). */
export interface RunData {
  userId: string;
  agentId: string;
  cron: string;
  timezone: string;
  createdAt: string;
}

/** The global due index (see dueKeys for its layout and its Cluster trade-off). */
export class RedisDueIndex implements DueIndex {
  readonly #redis: RedisClient;
  readonly keys: ReturnType<typeof dueKeys>;

  constructor(redis: RedisClient, namespace?: string) {
    this.#redis = redis;
    this.keys = dueKeys(namespace);
  }

  /** Adds (or moves) a schedule's entry; run data first, in the same transaction. */
  async add(scheduleId: string, data: RunData, nextRunAt: number): Promise<void> {
    await this.#redis.multi().hset(this.keys.runs, scheduleId, JSON.stringify(data)).zadd(this.keys.index, nextRunAt, scheduleId).exec();
  }

  async remove(scheduleIds: readonly string[]): Promise<void> {
    if (scheduleIds.length === 0) return;
    await this.#redis.multi().zrem(this.keys.index, ...scheduleIds).hdel(this.keys.runs, ...scheduleIds).exec();
  }

  /** Next run (ms) of each id, null for those not in the index (disabled or gone). */
  async nextRuns(scheduleIds: readonly string[]): Promise<(number | null)[]> {
    if (scheduleIds.length === 0) return [];
    const scores = await this.#redis.zmscore(this.keys.index, ...scheduleIds);
    return scores.map((s) => (s === null ? null : Number(s)));
  }

  /** Entries due now and not yet claimed: a backlog that grows means the schedulers fall behind. */
  async overdue(): Promise<number> {
    return this.#redis.zcount(this.keys.index, '-inf', String(Date.now()));
  }

  async claim(leaseMs: number, limit: number): Promise<DueRun[]> {
    const [lease, ...flat] = (await this.#redis.eval(CLAIM, 2, this.keys.index, this.keys.runs, String(leaseMs), String(limit))) as string[];
    const runs: DueRun[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const data = JSON.parse(flat[i + 2]!) as RunData;
      runs.push({ ...data, scheduleId: flat[i]!, dueAt: Number(flat[i + 1]), leaseUntil: Number(lease) });
    }
    return runs;
  }

  async settle(run: DueRun, next: number | null): Promise<boolean> {
    const args = [run.scheduleId, String(run.leaseUntil), next === null ? '' : String(next)];
    return (await this.#redis.eval(SETTLE, 2, this.keys.index, this.keys.runs, ...args)) === 1;
  }
}
