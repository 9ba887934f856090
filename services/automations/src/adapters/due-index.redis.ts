import { luaScript, type RedisClient } from '@workspace/platform';
import type { DueIndex, DueRun } from '../domain/ports.js';
import { dueKeys } from './keys.js';

/**
 * Claims due runs: every entry due by Redis' own clock (so replicas' clocks may disagree) moves to
 * `now + lease`, in one atomic step, and comes back with its run data and its attempt: what it
 * was due at and when it was first claimed. The attempt is recorded in the in-flight hash on the
 * first claim and kept until the run is acknowledged, so a run whose lease ran out (its replica
 * crashed or stalled) is claimed again, by any replica, as the same run with the same due time.
 * An entry without run data is garbage from an interrupted write and is dropped.
 * KEYS: index, runs, inflight. ARGV: leaseMs, limit.
 * Returns [lease, now, id, "dueAt:firstClaimAt", runJson, id, …].
 */
const CLAIM = luaScript(`
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now = string.format('%.0f', ms)
local lease = string.format('%.0f', ms + tonumber(ARGV[1]))
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = { lease, now }
for i = 1, #due, 2 do
  local run = redis.call('HGET', KEYS[2], due[i])
  if run then
    local attempt = redis.call('HGET', KEYS[3], due[i])
    if not attempt then
      attempt = string.format('%.0f', tonumber(due[i + 1])) .. ':' .. now
      redis.call('HSET', KEYS[3], due[i], attempt)
    end
    redis.call('ZADD', KEYS[1], lease, due[i])
    table.insert(out, due[i])
    table.insert(out, attempt)
    table.insert(out, run)
  else
    redis.call('ZREM', KEYS[1], due[i])
    redis.call('HDEL', KEYS[3], due[i])
  end
end
return out`);

/**
 * Compare-and-set on one entry, only while it still holds the claim's lease ARGV[2]: moves it to
 * ARGV[3] (or removes it and its run data when ARGV[3] is ''), and ends its attempt unless
 * ARGV[4] is '1' (then it stays in flight, due at ARGV[3], as the same run). A replica whose
 * lease ran out and was taken over, or a schedule deleted meanwhile, gets 0 and changes nothing.
 * KEYS: index, runs, inflight. ARGV: scheduleId, leaseUntil, next, keepInFlight.
 */
const SETTLE = luaScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not score) or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  if ARGV[4] ~= '1' then redis.call('HDEL', KEYS[3], ARGV[1]) end
end
return 1`);

/** What a due entry carries so that a run needs none of the user's keys (another slot). */
export interface RunData {
  userId: string;
  agentId: string;
  cron: string;
  timezone: string;
  createdAt: string;
  /** The alias runs go through (docs/api/automations.md#aliases-in-runs), resolved by the agents service at each run. */
  alias?: string | null;
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
    const { index, runs, inflight } = this.keys;
    await this.#redis.multi().zrem(index, ...scheduleIds).hdel(runs, ...scheduleIds).hdel(inflight, ...scheduleIds).exec();
  }

  /** Next run (ms) of each id, null for those not in the index (disabled or gone). */
  async nextRuns(scheduleIds: readonly string[]): Promise<(number | null)[]> {
    if (scheduleIds.length === 0) return [];
    const scores = await this.#redis.zmscore(this.keys.index, ...scheduleIds);
    return scores.map((s) => (s === null ? null : Number(s)));
  }

  /** Entries due now and not claimed (or whose claim ran out): a backlog that grows means the schedulers fall behind. */
  async overdue(): Promise<number> {
    return this.#redis.zcount(this.keys.index, '-inf', String(Date.now()));
  }

  async claim(leaseMs: number, limit: number): Promise<DueRun[]> {
    const { index, runs, inflight } = this.keys;
    const [lease, now, ...flat] = (await this.#redis.eval(CLAIM, 3, index, runs, inflight, String(leaseMs), String(limit))) as string[];
    const claimed: DueRun[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const data = JSON.parse(flat[i + 2]!) as RunData;
      const [dueAt, firstClaimAt] = flat[i + 1]!.split(':').map(Number);
      claimed.push({ ...data, scheduleId: flat[i]!, dueAt: dueAt!, firstClaimAt: firstClaimAt!, claimedAt: Number(now), leaseUntil: Number(lease) });
    }
    return claimed;
  }

  async ack(run: DueRun, next: number | null): Promise<boolean> {
    return this.#settle(run, next === null ? '' : String(next), false);
  }

  async retryAt(run: DueRun, at: number): Promise<boolean> {
    return this.#settle(run, String(at), true);
  }

  async #settle(run: DueRun, next: string, keepInFlight: boolean): Promise<boolean> {
    const { index, runs, inflight } = this.keys;
    return (await this.#redis.eval(SETTLE, 3, index, runs, inflight, run.scheduleId, String(run.leaseUntil), next, keepInFlight ? '1' : '0')) === 1;
  }
}
