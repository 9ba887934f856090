/** An alias: a name that points at one configuration of an Agent (docs/api/agents.md#aliases). */
export interface AliasRecord {
  alias: string;
  agentId: string;
  configId: string;
  description: string;
  createdAt: string;
  updatedAt: string;
}

/** One period during which an alias named a config; `until` null for the present. */
export interface AliasHistoryEntry {
  configId: string;
  from: string;
  until: string | null;
}

export interface PutAliasRequest {
  userId: string;
  agentId: string;
  alias: string;
  configId: string;
  description: string;
  /** Move only while the alias names this config (compare-and-set). */
  ifMatch?: string | undefined;
  at: string;
  /** MAX_ALIASES_PER_AGENT: a new alias beyond it is refused. */
  maxAliases: number;
}

export type PutAliasOutcome =
  | { status: 'created' | 'moved'; alias: AliasRecord }
  | { status: 'precondition'; currentConfigId: string | undefined }
  | { status: 'quota'; used: number }
  | { status: 'agent-gone' }
  | { status: 'config-gone' };

/**
 * Aliases of a user's Agents, and which configs are kept. Every write is one atomic step that
 * also counts the alias as a pin of its config, so retention never reclaims an aliased config.
 */
export interface AliasRepo {
  /** True while the config is stored for the Agent (listed, pinned by a chat, or aliased). */
  isKept(userId: string, agentId: string, configId: string): Promise<boolean>;
  /** Every stored config id of the Agent, oldest first. */
  keptOldestFirst(userId: string, agentId: string): Promise<string[]>;
  put(request: PutAliasRequest): Promise<PutAliasOutcome>;
  get(userId: string, agentId: string, alias: string): Promise<AliasRecord | undefined>;
  /** Sorted by name. */
  list(userId: string, agentId: string): Promise<AliasRecord[]>;
  /** Newest first; undefined when the alias does not exist. */
  history(userId: string, agentId: string, alias: string): Promise<AliasHistoryEntry[] | undefined>;
  /** False when the alias did not exist. */
  delete(userId: string, agentId: string, alias: string): Promise<boolean>;
}
