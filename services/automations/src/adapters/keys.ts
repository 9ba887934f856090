import { userTag } from '@workspace/platform';

/**
 * Redis keys of one user. All carry the user's hash tag, so a script or MULTI over any of them
 * runs on one Redis Cluster slot.
 */
export function userKeys(userId: string) {
  const base = `automations:${userTag(userId)}`;
  return {
    /** Hash: one schedule's record. */
    schedule: (scheduleId: string) => `${base}:schedule:${scheduleId}`,
    /** Sorted set of an Agent's schedule ids, scored by creation time (ms). */
    schedules: (agentId: string) => `${base}:schedules:${agentId}`,
    /** Hash: one trigger's record with its sealed secret. */
    trigger: (triggerId: string) => `${base}:trigger:${triggerId}`,
    /** Sorted set of an Agent's trigger ids, scored by creation time (ms). */
    triggers: (agentId: string) => `${base}:triggers:${agentId}`,
    /** Set of deleted Agent ids: a create that raced the cascade is refused. */
    deletedAgents: `${base}:deleted-agents`,
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
export function dueKeys(namespace = 'automations') {
  return {
    /** Sorted set: schedule id → next run (ms since the epoch). Only enabled schedules are in it. */
    index: `${namespace}:{due}:index`,
    /** Hash: schedule id → JSON of what a run needs (user, Agent, cron, zone, createdAt). */
    runs: `${namespace}:{due}:runs`,
  };
}

/** Trigger id → owning user: the unauthenticated hook has nothing else to start from. Its own slot. */
export function triggerOwnerKey(triggerId: string): string {
  return `automations:trigger-owner:${triggerId}`;
}

/**
 * Stores a record and indexes it under its Agent unless the Agent is tombstoned.
 * KEYS: record, Agent index, tombstones. ARGV: agentId, record JSON, createdAt (ms), id.
 */
export const CREATE_UNLESS_DELETED = `
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return 1`;
