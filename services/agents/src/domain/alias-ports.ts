import type { RouteEntry } from './rollout.js';

/**
 * An alias: a name that points at one configuration of an Agent (docs/api/agents.md#aliases),
 * or splits its chats between 2–5 of them by weight (docs/api/agents.md#rollout).
 */
export interface AliasRecord {
  alias: string;
  agentId: string;
  /** For a routed alias: the entry of greatest weight, the first on ties. */
  configId: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  /** null for a plain alias; the entries in the order they were sent for a routed one. */
  routing: RouteEntry[] | null;
}

/** One period during which an alias named a config (or routed between configs); `until` null for the present. */
export interface AliasHistoryEntry {
  configId: string;
  routing: RouteEntry[] | null;
  from: string;
  until: string | null;
}

/** Chats started through an alias per config since its current period began (`since`). */
export interface AliasStats {
  alias: string;
  since: string;
  configs: { configId: string; weight: number; chats: number }[];
}

export interface PutAliasRequest {
  userId: string;
  agentId: string;
  alias: string;
  /** For a routed alias: the entry of greatest weight. */
  configId: string;
  /** null: the alias names `configId` alone. */
  routing: RouteEntry[] | null;
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
  | { status: 'config-gone'; configId: string };

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
  /** Chats per config of the alias's current period; undefined when the alias does not exist. */
  stats(userId: string, agentId: string, alias: string): Promise<AliasStats | undefined>;
  /** False when the alias did not exist. */
  delete(userId: string, agentId: string, alias: string): Promise<boolean>;
}
