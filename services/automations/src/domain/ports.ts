/** A schedule as stored. Schedules are immutable: there is no update, only create and delete. */
export interface ScheduleRecord {
  scheduleId: string;
  agentId: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  createdAt: string;
}

/** A schedule as shown: with its next run (null when disabled). */
export interface Schedule extends ScheduleRecord {
  nextRunAt: string | null;
}

/** What the Agent list shows of an Agent's schedules. */
export interface ScheduleSummary {
  agentId: string;
  /** Enabled schedules. */
  activeScheduleCount: number;
  /** The earliest next run among them, or null. */
  nextRunAt: string | null;
}

/** A run claimed from the due index: everything needed to start it without the user's records. */
export interface DueRun {
  scheduleId: string;
  userId: string;
  agentId: string;
  cron: string;
  timezone: string;
  createdAt: string;
  /** When it was due (ms since the epoch), before the claim moved it. */
  dueAt: number;
  /** The claim's lease (ms since the epoch): settling succeeds only while the index still holds it. */
  leaseUntil: number;
}

/** One user's schedules. Writes are atomic per user; every method is idempotent where it can be. */
export interface ScheduleRepo {
  /**
   * Stores the schedule and, when `nextRunAt` is given, its first due time. False (nothing kept)
   * when the Agent was deleted meanwhile (its tombstone is there).
   */
  create(userId: string, schedule: ScheduleRecord, nextRunAt: number | null): Promise<boolean>;
  /** The Agent's schedules, newest first, each with its next run from the due index. */
  list(userId: string, agentId: string): Promise<Schedule[]>;
  get(userId: string, scheduleId: string): Promise<ScheduleRecord | undefined>;
  exists(userId: string, scheduleId: string): Promise<boolean>;
  /** Removes it from the due index, then its record (a retry finishes a half-done delete). */
  delete(userId: string, schedule: ScheduleRecord): Promise<void>;
  /** One summary per Agent id, in the order given. */
  summarize(userId: string, agentIds: readonly string[]): Promise<ScheduleSummary[]>;
  /** Tombstones the Agent (later creates fail), then removes every schedule of it. */
  deleteAgent(userId: string, agentId: string): Promise<void>;
}

/** The global index of due runs, shared by every replica. */
export interface DueIndex {
  /** Claims up to `limit` runs due now, each for `leaseMs`: no other claim gets them meanwhile. */
  claim(leaseMs: number, limit: number): Promise<DueRun[]>;
  /**
   * Moves a claimed run to its next due time (`null` removes it) if the claim still holds; false
   * when another replica took it over or it was deleted.
   */
  settle(run: DueRun, next: number | null): Promise<boolean>;
}

/** A webhook trigger as shown (never with its secret). */
export interface TriggerRecord {
  triggerId: string;
  agentId: string;
  name: string;
  createdAt: string;
}

/** A trigger as stored: with its secret sealed by the SecretBox. */
export interface StoredTrigger extends TriggerRecord {
  sealedSecret: string;
}

/** One user's triggers, and the global trigger id → user lookup the unauthenticated hook needs. */
export interface TriggerRepo {
  /** False (nothing kept) when the Agent was deleted meanwhile. */
  create(userId: string, trigger: StoredTrigger): Promise<boolean>;
  /** The Agent's triggers, newest first. */
  list(userId: string, agentId: string): Promise<TriggerRecord[]>;
  get(userId: string, triggerId: string): Promise<StoredTrigger | undefined>;
  /** The user a trigger belongs to, from the global lookup. */
  ownerOf(triggerId: string): Promise<string | undefined>;
  delete(userId: string, trigger: TriggerRecord): Promise<void>;
  /** Tombstones the Agent, then removes every trigger of it and their lookup keys. */
  deleteAgent(userId: string, agentId: string): Promise<void>;
}

/** Keeps webhook secrets unreadable at rest where it can (see adapters/secret-box.ts). */
export interface SecretBox {
  /** `context` (the trigger id) is bound to the sealed value: it cannot be moved to another trigger. */
  seal(secret: string, context: string): string;
  open(sealed: string, context: string): string;
}

/** Who a use case runs for, and what to pass on to other services. */
export interface Scope {
  userId: string;
  requestId?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** The user's Agents and chats, as the agents service owns them. */
export interface AgentDirectory {
  /** Resolves when the Agent exists for the user; AGENT_NOT_FOUND otherwise. */
  require(scope: Scope, agentId: string): Promise<void>;
  /** Starts a chat of the Agent for the user; resolves with its id. */
  startChat(scope: Scope, agentId: string, title: string): Promise<string>;
}

export type Clock = () => Date;
