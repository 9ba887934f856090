import type { RedisClient } from '@workspace/platform';
import type { AgentConfig } from '../domain/ports.js';
import type { UserKeys } from './keys.js';

/** The config an alias names, read on `conn` (inside a transaction's WATCH); null when there is no such alias. */
export async function aliasedConfig(conn: RedisClient, k: UserKeys, agentId: string, alias: string): Promise<AgentConfig | null> {
  const raw = await conn.hget(k.aliases(agentId), alias);
  if (raw === null) return null;
  const { configId } = JSON.parse(raw) as { configId: string };
  const config = await conn.get(k.config(configId));
  // An aliased config is pinned, so it is there while its alias is.
  if (config === null) throw new Error(`aliased config ${configId} of ${agentId} is missing`);
  return JSON.parse(config) as AgentConfig;
}
