/** A schedule as stored. Schedules are immutable: there is no update, only create and delete. */
export interface ScheduleRecord {
  scheduleId: string;
  agentId: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  createdAt: string;
  /** Runs start chats on the config this alias names at run time (docs/api/automations.md#aliases-in-runs); null: the current one. */
  alias?: string | null;
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
  alias?: string | null;
  /**
   * When it was due (ms since the epoch). A run claimed again after a lease ran out keeps it: with
   * the schedule id it names the run, and the chat's idempotency key is derived from both.
   */
  dueAt: number;
  /** When this run was first claimed, and when this claim was made (ms, Redis' clock). */
  firstClaimAt: number;
  claimedAt: number;
  /** The claim's lease (ms since the epoch): ack and retryAt succeed only while the index still holds it. */
  leaseUntil: number;
}

/**
 * What a create of a schedule or trigger did: stored; refused because the Agent was deleted
 * meanwhile (its tombstone is there); or refused because the Agent has `max` already. Nothing is
 * kept unless `created`.
 */
export type CreateOutcome = { status: 'created' } | { status: 'agent-deleted' } | { status: 'quota'; used: number };

/** One user's schedules. Writes are atomic per user; every method is idempotent where it can be. */
export interface ScheduleRepo {
  /**
   * Stores the schedule and, when `nextRunAt` is given, its first due time, unless the Agent was
   * deleted or has `max` schedules (0: no limit) — checked in the same atomic step as the write.
   */
  create(userId: string, schedule: ScheduleRecord, nextRunAt: number | null, max?: number): Promise<CreateOutcome>;
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

/**
 * The global index of due runs, shared by every replica. A claim is a lease: a run that is not
 * acknowledged before its lease ends is claimed again (at least once), as the same run.
 */
export interface DueIndex {
  /** Claims up to `limit` runs due now, each for `leaseMs`: no other claim gets them meanwhile. */
  claim(leaseMs: number, limit: number): Promise<DueRun[]>;
  /**
   * Acknowledges a claimed run: moves the schedule to its next due time (`null` removes it) if the
   * claim still holds; false when another replica took it over or the schedule was deleted.
   */
  ack(run: DueRun, next: number | null): Promise<boolean>;
  /** Lets a claimed run be claimed again from `at` on, still as the same run; false as for ack. */
  retryAt(run: DueRun, at: number): Promise<boolean>;
}

/** A webhook trigger as shown (never with its secret). */
export interface TriggerRecord {
  triggerId: string;
  agentId: string;
  name: string;
  createdAt: string;
  /** Calls start chats on the config this alias names at call time (docs/api/automations.md#aliases-in-runs); null: the current one. */
  alias?: string | null;
}

/** A trigger as stored: with its secret sealed by the SecretBox. */
export interface StoredTrigger extends TriggerRecord {
  sealedSecret: string;
}

/** One user's triggers, and the global trigger id → user lookup the unauthenticated hook needs. */
export interface TriggerRepo {
  /** Stores it unless the Agent was deleted meanwhile or has `max` triggers (0: no limit); atomic. */
  create(userId: string, trigger: StoredTrigger, max?: number): Promise<CreateOutcome>;
  /** The Agent's triggers, newest first. */
  list(userId: string, agentId: string): Promise<TriggerRecord[]>;
  get(userId: string, triggerId: string): Promise<StoredTrigger | undefined>;
  /** The user a trigger belongs to, from the global lookup. */
  ownerOf(triggerId: string): Promise<string | undefined>;
  delete(userId: string, trigger: TriggerRecord): Promise<void>;
  /** Tombstones the Agent, then removes every trigger of it and their lookup keys. */
  deleteAgent(userId: string, agentId: string): Promise<void>;
}

/** Keeps webhook secrets unreadable at rest where it can (packages/platform/src/secret-box.ts). */
export type { SecretBox } from '@workspace/platform';

/** Who a use case runs for, and what to pass on to other services. */
export interface Scope {
  userId: string;
  requestId?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** The user's Agents and chats, as the agents service owns them. */
/** A chat a run starts. */
export interface StartChat {
  agentId: string;
  title: string;
  idempotencyKey: string;
  alias?: string | undefined;
  routingKey?: string | undefined;
}

export interface AgentDirectory {
  /** Resolves when the Agent (and `alias`, when given) exists for the user; AGENT_NOT_FOUND / ALIAS_NOT_FOUND otherwise. */
  require(scope: Scope, agentId: string, alias?: string): Promise<void>;
  /**
   * Starts a chat of the Agent for the user; resolves with its id. A repeat with the same
   * idempotency key resolves with the chat the first call started, so a caller may retry freely.
   * `routingKey`: through a routed alias, the same key gets the same config (docs/api/agents.md#rollout).
   */
  startChat(scope: Scope, chat: StartChat): Promise<string>;
}

export type Clock = () => Date;
