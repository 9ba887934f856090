import type { RedisClient } from '@workspace/platform';
import type { AgentConfig } from '../domain/ports.js';
import type { RouteEntry } from '../domain/rollout.js';
import { decodeAlias } from './alias-repo.redis.js';
import type { UserKeys } from './keys.js';

/**
 * The config a chat through the alias gets, read on `conn` (inside a transaction's WATCH): the
 * one it names, or for a routed alias the one `pick` chooses of its routing. Null when there is
 * no such alias.
 */
export async function aliasedConfig(
  conn: RedisClient,
  k: UserKeys,
  agentId: string,
  alias: string,
  pick: (routing: readonly RouteEntry[]) => string,
): Promise<AgentConfig | null> {
  const raw = await conn.hget(k.aliases(agentId), alias);
  if (raw === null) return null;
  const record = decodeAlias(raw);
  const configId = record.routing ? pick(record.routing) : record.configId;
  const config = await conn.get(k.config(configId));
  // An aliased (or routed) config is pinned, so it is there while its alias is.
  if (config === null) throw new Error(`aliased config ${configId} of ${agentId} is missing`);
  return JSON.parse(config) as AgentConfig;
}
