import { tombstone, type RedisClient } from '@workspace/platform';

/**
 * How long a deleted Agent's tombstone refuses creates. It only has to outlast a create that
 * checked the Agent before the deletion and writes after the cascade (one request, seconds);
 * a day leaves room for any stall. Later, the Agent check itself answers AGENT_NOT_FOUND.
 */
export const AGENT_TOMBSTONE_TTL_MS = 24 * 3600_000;

/** Tombstones an Agent in the user's set `deletedAgents` (userKeys; see platform's tombstones). */
export async function tombstoneAgent(redis: RedisClient, deletedAgents: string, agentId: string, ttlMs = AGENT_TOMBSTONE_TTL_MS): Promise<void> {
  await tombstone(redis, deletedAgents, agentId, ttlMs);
}
