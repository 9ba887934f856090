import { isAppError, type Logger } from '@workspace/platform';
import { nextRunAfter } from './cron.js';
import type { AgentDirectory, Clock, DueIndex, DueRun, ScheduleRepo } from './ports.js';

export const SCHEDULED_TITLE = 'Scheduled run';
/** A record missing this soon after its schedule was created may still be on its way (due entry is written first). */
export const CREATE_GRACE_MS = 10_000;
const RETRY_SOON_MS = 1_000;
/**
 * A run whose chat could not be started (agents down, say) is retried every lease for this long
 * after its first attempt, then given up. Well inside the 7 days the agents service keeps an
 * idempotency key, so no retry can outlive the key and start a second chat.
 */
export const GIVE_UP_AFTER_MS = 24 * 3600_000;

export type RunPlan = { kind: 'start'; next: number | null } | { kind: 'retry'; at: number } | { kind: 'drop' };
export type RunOutcome = 'started' | 'failed' | 'skipped' | 'taken' | 'retried' | 'alias-gone';

/** The idempotency key of a run's chat: the same for every attempt at the run, on any replica. */
export function runIdempotencyKey(run: Pick<DueRun, 'scheduleId' | 'dueAt'>): string {
  return `${run.scheduleId}@${run.dueAt}`;
}

/**
 * What to do with a claimed run; pure, so the decisions are tested without Redis. The next run
 * counts from now, not from when it was due: runs missed while no replica was up are not
 * replayed one by one, the schedule just runs once and carries on.
 */
export function planRun(run: DueRun, now: Date, recordExists: boolean): RunPlan {
  if (!recordExists) {
    const age = now.getTime() - Date.parse(run.createdAt);
    return age < CREATE_GRACE_MS ? { kind: 'retry', at: now.getTime() + RETRY_SOON_MS } : { kind: 'drop' };
  }
  const next = nextRunAfter(run, new Date(Math.max(now.getTime(), run.dueAt)));
  return { kind: 'start', next: next?.getTime() ?? null };
}

export interface SchedulerOptions {
  due: DueIndex;
  schedules: Pick<ScheduleRepo, 'exists'>;
  agents: AgentDirectory;
  logger: Logger;
  /** Pause between passes over the due index when the last one found less than a batch. */
  tickMs: number;
  /**
   * How long a claim keeps a run from other replicas: it covers the record lookup and CreateChat,
   * and is how long a run waits after a crash before another replica takes it up.
   */
  leaseMs?: number;
  batch?: number;
  clock?: Clock;
  observe?: (outcome: RunOutcome, lateMs: number) => void;
}

/**
 * Runs due schedules, exactly once each. Every replica runs one; they never coordinate in
 * process. Each pass claims due runs in Redis (a claim is exclusive for its lease), starts each
 * run's chat under an idempotency key derived from (schedule, due time), and only then
 * acknowledges the run, which moves the schedule to its next time while the claim still holds.
 * A crash anywhere before the ack leaves the run claimed: when the lease ends any replica claims
 * it again as the same run, and CreateChat with the same key returns the chat the first attempt
 * may have started. At-least-once claiming plus an idempotent create: one chat per run.
 */
export class Scheduler {
  readonly #o: Required<Omit<SchedulerOptions, 'observe'>> & Pick<SchedulerOptions, 'observe'>;
  #timer: NodeJS.Timeout | undefined;
  #current: Promise<void> | undefined;
  #stopped = false;

  constructor(options: SchedulerOptions) {
    this.#o = { leaseMs: 15_000, batch: 100, clock: () => new Date(), ...options };
  }

  start(): void {
    this.#stopped = false;
    this.#next(0);
  }

  /** Stops taking runs and waits for the pass in progress (at most about a lease). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#current;
  }

  /** One pass: claims what is due and starts it; resolves with the number of runs claimed. */
  async tick(): Promise<number> {
    // Measured before the claim, so this replica gives up its calls no later than Redis ends the lease.
    const leaseEnds = Date.now() + this.#o.leaseMs;
    const runs = await this.#o.due.claim(this.#o.leaseMs, this.#o.batch);
    const signal = AbortSignal.timeout(Math.max(1, leaseEnds - Date.now()));
    await Promise.all(runs.map((run) => this.#run(run, signal)));
    return runs.length;
  }

  #next(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#current = this.#pass();
    }, delayMs);
  }

  async #pass(): Promise<void> {
    let claimed = 0;
    try {
      claimed = await this.tick();
    } catch (err) {
      this.#o.logger.warn({ err }, 'scheduler pass failed; trying again next tick');
    }
    // A full batch means more may be due: go on at once.
    this.#next(claimed >= this.#o.batch ? 0 : this.#o.tickMs);
  }

  async #run(run: DueRun, signal: AbortSignal): Promise<void> {
    try {
      const plan = planRun(run, this.#o.clock(), await this.#o.schedules.exists(run.userId, run.scheduleId));
      if (plan.kind === 'retry') {
        await this.#o.due.retryAt(run, plan.at);
      } else if (plan.kind === 'drop') {
        await this.#o.due.ack(run, null);
        this.#observe('skipped', run);
      } else {
        const outcome = await this.#startChat(run, signal);
        // 'retried' is not acknowledged: the run stays claimed and comes back when the lease ends.
        const acked = outcome !== 'retried' && (await this.#o.due.ack(run, plan.next));
        this.#observe(acked || outcome === 'retried' ? outcome : 'taken', run);
      }
    } catch (err) {
      // Still claimed: the run comes back when the lease ends (a chat already started is found by its key).
      this.#o.logger.error({ err, scheduleId: run.scheduleId }, 'could not process a due run');
    }
  }

  /** One attempt at the run's chat; any number of attempts start one chat (same key). */
  async #startChat(run: DueRun, signal: AbortSignal): Promise<Exclude<RunOutcome, 'taken'>> {
    const scope = { userId: run.userId, requestId: `run-${run.scheduleId}-${run.dueAt}`, signal };
    const log = { scheduleId: run.scheduleId, agentId: run.agentId, dueAt: new Date(run.dueAt).toISOString() };
    try {
      // Routed by the schedule's id: every run of one schedule gets the same config of a routed alias.
      const chat = { agentId: run.agentId, title: SCHEDULED_TITLE, idempotencyKey: runIdempotencyKey(run), alias: run.alias ?? undefined, routingKey: run.scheduleId };
      const chatId = await this.#o.agents.startChat(scope, chat);
      this.#o.logger.info({ ...log, chatId, lateMs: this.#late(run) }, 'scheduled run started a chat');
      return 'started';
    } catch (err) {
      // The Agent went and the cascade is on its way: nothing to start, the schedule carries on.
      if (isAppError(err) && err.code === 'AGENT_NOT_FOUND') {
        this.#o.logger.info({ ...log, err }, 'scheduled run skipped: the Agent is gone');
        return 'skipped';
      }
      // The alias it runs through was deleted: this run starts nothing; the schedule carries on.
      if (isAppError(err) && err.code === 'ALIAS_NOT_FOUND') {
        this.#o.logger.warn({ ...log, alias: run.alias, err }, 'scheduled run started no chat: its alias is gone');
        return 'alias-gone';
      }
      if (!transient(err)) {
        this.#o.logger.error({ ...log, err }, 'scheduled run failed: no chat started');
        return 'failed';
      }
      if (run.claimedAt - run.firstClaimAt >= GIVE_UP_AFTER_MS) {
        this.#o.logger.error({ ...log, err }, 'scheduled run given up: no chat started since its first attempt a day ago');
        return 'failed';
      }
      this.#o.logger.warn({ ...log, err }, 'scheduled run not started yet; it is retried when its lease ends');
      return 'retried';
    }
  }

  #late(run: DueRun): number {
    return Math.max(0, this.#o.clock().getTime() - run.dueAt);
  }

  #observe(outcome: RunOutcome, run: DueRun): void {
    this.#o.observe?.(outcome, this.#late(run));
  }
}

/** Worth another attempt: the agents service or the way to it failed, not the request. */
function transient(err: unknown): boolean {
  return !isAppError(err) || err.code === 'UNAVAILABLE' || err.code === 'INTERNAL' || err.code === 'RATE_LIMITED';
}
