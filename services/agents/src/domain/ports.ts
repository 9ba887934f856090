import type { WorkspaceEvent } from '@workspace/platform';
import type { EditableFields, KnowledgeFile, ResponseMode } from './fields.js';
import type { Lineage } from './lineage.js';
import type { RouteEntry } from './rollout.js';

/** An immutable configuration, as stored and returned. */
export interface AgentConfig extends EditableFields, Lineage {
  schemaVersion: number;
  configId: string;
  agentId: string;
  normalizedName: string;
  createdAt: string;
  contentDigest: string;
}

/** What the list shows of an Agent's current config, kept beside the record so a page needs no config reads. */
export interface AgentSummary {
  name: string;
  description: string;
  projectName: string;
  responseMode: ResponseMode;
  /** `normalizedName` and the description normalized the same way, for `q`. */
  searchName: string;
  searchDescription: string;
}

export interface AgentRecord {
  agentId: string;
  currentConfigId: string;
  state: 'active';
  createdAt: string;
  updatedAt: string;
  lastChatAt: string | null;
  chatCount: number;
  summary: AgentSummary;
}

export interface ChatRecord {
  chatId: string;
  agentId: string;
  configId: string;
  projectName: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** The alias the chat was started through (docs/api/agents.md#aliases); null or absent for none. */
  alias?: string | null;
}

export type CommitResult =
  | { status: 'committed'; agent: AgentRecord }
  | { status: 'stale'; currentConfigId: string }
  | { status: 'gone' };

export interface CommitConfigRequest {
  agentId: string;
  /** The write happens only while this is still the current config (compare-and-set). */
  baseConfigId: string;
  config: AgentConfig;
  summary: AgentSummary;
  /** Picks, among every stored config (oldest first), those to delete in the same transaction. */
  expire: (oldestFirst: string[], pinned: ReadonlySet<string>) => string[];
  events: WorkspaceEvent[];
}

/** An Agent to add: see AgentRepo.create. */
export interface NewAgent {
  userId: string;
  agent: AgentRecord;
  config: AgentConfig;
  events: WorkspaceEvent[];
  /** The most Agents the user may have; the create is refused when they have this many already. */
  maxAgents?: number | undefined;
  /** An earlier create with this key whose Agent still exists wins: its id comes back instead. */
  idempotencyKey?: string | undefined;
}

export type CreateAgentOutcome =
  | { status: 'created' }
  | { status: 'exists'; agentId: string }
  | { status: 'quota'; used: number };

/** A chat to add: see AgentRepo.createChat. */
export interface NewChat {
  userId: string;
  agentId: string;
  idempotencyKey?: string | undefined;
  /** Pin the config this alias names at commit time instead of the current one. */
  alias?: string | undefined;
  /** For a routed alias: which of its configs this chat gets (docs/api/agents.md#rollout). */
  pick: (routing: readonly RouteEntry[]) => string;
  /** `aliased`: the config the alias names, when one was given. */
  make: (agent: AgentRecord, aliased?: AgentConfig) => { chat: ChatRecord; events: WorkspaceEvent[] };
}

/** Persistence of one user's Agents, configurations and chats. Every write is atomic. */
export interface AgentRepo {
  /**
   * Stores a new Agent with its first configuration, atomically with the quota check and the
   * idempotency key (see NewAgent): nothing is written unless the outcome is `created`.
   */
  create(request: NewAgent): Promise<CreateAgentOutcome>;
  get(userId: string, agentId: string): Promise<AgentRecord | undefined>;
  getConfig(userId: string, configId: string): Promise<AgentConfig | undefined>;
  /** Makes `config` current if `baseConfigId` still is; expires old configs; one transaction. */
  commitConfig(userId: string, request: CommitConfigRequest): Promise<CommitResult>;
  /** The newest `limit` stored configurations, newest first. */
  listVersions(userId: string, agentId: string, limit: number): Promise<AgentConfig[]>;
  /** A page of Agents, newest first (createdAt, then agentId, descending), from a sorted index. */
  page(userId: string, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }>;
  /** How many Agents the user has. */
  count(userId: string): Promise<number>;
  /** Like `page`, over the Agents that match `q` (normalized, not empty) as `matchesQuery` says. */
  search(userId: string, q: string, offset: number, limit: number): Promise<{ agents: AgentRecord[]; total: number }>;
  /** Removes the Agent, its configs and chats, and queues `events`, at once; false when absent. */
  delete(userId: string, agentId: string, events: WorkspaceEvent[]): Promise<boolean>;
  /**
   * Adds a chat built by `make` from the Agent as it is at commit time (so it pins the config
   * current then), bumps chatCount and sets lastChatAt; undefined when the Agent is absent.
   * With an idempotency key, the chat an earlier call made under the same key (and Agent) is
   * returned instead, also to a call racing it. `null` when the request's alias does not exist.
   */
  createChat(request: NewChat): Promise<ChatRecord | undefined | null>;
  /** The Agent's chats, newest first. */
  listChats(userId: string, agentId: string): Promise<ChatRecord[]>;
  getChat(userId: string, chatId: string): Promise<ChatRecord | undefined>;
}

/** Who a use case runs for, and what to pass on to other services. */
export interface Scope {
  userId: string;
  requestId?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** Projects of the user, as the projects service owns them. */
export interface ProjectDirectory {
  /** The stored spelling of the project `name` names (case-insensitively); PROJECT_NOT_FOUND / PROJECT_ARCHIVED otherwise. */
  resolve(scope: Scope, name: string): Promise<string>;
}

/** The Agents' knowledge copies, as the files service keeps them (docs/api/agents.md#knowledge). */
export interface KnowledgeStore {
  /**
   * Copies the user's workspace files at `paths` into storage owned by the Agent (content-
   * addressed: bytes it holds already are not copied again) and returns their stored form in
   * order. FILE_NOT_FOUND, IS_A_DIRECTORY and INVALID_PATH name `knowledgeFiles[i].path`.
   */
  pin(scope: Scope, agentId: string, paths: string[]): Promise<KnowledgeFile[]>;
  /** Pins bytes an import staged (uploads of the files service) as the Agent's knowledge, all at once. */
  pinStaged(scope: Scope, agentId: string, files: StagedKnowledge[]): Promise<void>;
  /** Drops every pin of an Agent that will not exist after all, for good (idempotent). */
  unpinAll(scope: Scope, agentId: string): Promise<void>;
}

/** Knowledge bytes PUT to a staged upload of the files service (an import, docs/api/agents.md#import). */
export interface StagedKnowledge {
  uploadId: string;
  sha256: string;
  size: number;
}

export type Clock = () => Date;
