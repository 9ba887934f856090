import { luaScript, TOMBSTONED_LUA, userTag } from '@workspace/platform';
import type { CreateOutcome } from '../domain/ports.js';

/** The namespace of a deployment that sets none (its keys are the ones it always had). */
export const DEFAULT_NAMESPACE = 'automations';

/**
 * Redis keys of one user. All carry the user's hash tag, so a script or MULTI over any of them
 * runs on one Redis Cluster slot. Every key of the service starts with its namespace
 * (DUE_INDEX_NAMESPACE): deployments (or test stacks) sharing one Redis keep apart not only
 * their due indexes but what those index, so one's cascade never removes records whose due
 * runs live in the other's index.
 */
export function userKeys(userId: string, namespace = DEFAULT_NAMESPACE) {
  const base = `${namespace}:${userTag(userId)}`;
  return {
    /** Hash: one schedule's record. */
    schedule: (scheduleId: string) => `${base}:schedule:${scheduleId}`,
    /** Sorted set of an Agent's schedule ids, scored by creation time (ms). */
    schedules: (agentId: string) => `${base}:schedules:${agentId}`,
    /** Hash: one trigger's record with its sealed secret. */
    trigger: (triggerId: string) => `${base}:trigger:${triggerId}`,
    /** Sorted set of an Agent's trigger ids, scored by creation time (ms). */
    triggers: (agentId: string) => `${base}:triggers:${agentId}`,
    /**
     * Sorted set of deleted Agent ids, each scored by when its tombstone expires (ms, Redis'
     * clock): a create that raced the cascade is refused. See adapters/tombstones.redis.ts.
     */
    deletedAgents: `${base}:agent-tombstones`,
  };
}

/**
 * The global keys. The due index is one sorted set (and its companion hash) under one hash tag:
 * one slot, so a claim is a single atomic script and every replica scans one place. The cost:
 * on Redis Cluster all due runs live on one node (about 200 bytes per enabled schedule, a few
 * commands per run). Past what one node takes, split it into N tagged shards
 * (`{due:0..N-1}`, shard = hash of the schedule id) and let each pass visit all of them.
 * `namespace` keeps tests' indexes apart from a running service's.
 */
export function dueKeys(namespace = DEFAULT_NAMESPACE) {
  return {
    /** Sorted set: schedule id → next run (ms since the epoch). Only enabled schedules are in it. */
    index: `${namespace}:{due}:index`,
    /** Hash: schedule id → JSON of what a run needs (user, Agent, cron, zone, createdAt). */
    runs: `${namespace}:{due}:runs`,
    /**
     * Hash: schedule id → `<dueAt>:<firstClaimAt>` (ms) of the run claimed and not yet
     * acknowledged; its index score is then the lease's end, when any replica may claim it again.
     */
    inflight: `${namespace}:{due}:inflight`,
  };
}

/** Trigger id → owning user: the unauthenticated hook has nothing else to start from. Its own slot. */
export function triggerOwnerKey(triggerId: string, namespace = DEFAULT_NAMESPACE): string {
  return `${namespace}:trigger-owner:${triggerId}`;
}

/**
 * Stores a record and indexes it under its Agent unless the Agent is tombstoned (a tombstone
 * that has expired no longer counts, even before it is trimmed) or already has `max` of them
 * (the per-Agent count quota, docs/api/usage.md#quotas: checked in the same step, so it holds under
 * concurrency).
 * KEYS: record, Agent index, tombstones. ARGV: agentId, record JSON, createdAt (ms), id, max (0: none).
 * Returns {1, count} when stored, {0, 0} when the Agent is tombstoned, {-1, count} at the quota.
 */
export const CREATE_UNLESS_DELETED = luaScript(`${TOMBSTONED_LUA}
if tombstoned(KEYS[3], ARGV[1]) then return {0, 0} end
local count = redis.call('ZCARD', KEYS[2])
local max = tonumber(ARGV[5])
if max > 0 and count >= max then return {-1, count} end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return {1, count + 1}`);

/** CREATE_UNLESS_DELETED's reply as the domain's outcome. */
export function createOutcome(reply: unknown): CreateOutcome {
  const [status, count] = reply as [number, number];
  if (status === 1) return { status: 'created' };
  return status === 0 ? { status: 'agent-deleted' } : { status: 'quota', used: count };
}
