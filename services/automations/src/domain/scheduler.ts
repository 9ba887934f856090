import { isAppError, type Logger } from '@workspace/platform';
import { nextRunAfter } from './cron.js';
import type { AgentDirectory, Clock, DueIndex, DueRun, ScheduleRepo } from './ports.js';

export const SCHEDULED_TITLE = 'Scheduled run';
/** A record missing this soon after its schedule was created may still be on its way (due entry is written first). */
export const CREATE_GRACE_MS = 10_000;
const RETRY_SOON_MS = 1_000;

export type RunPlan = { kind: 'start'; next: number | null } | { kind: 'retry'; at: number } | { kind: 'drop' };
export type RunOutcome = 'started' | 'failed' | 'skipped' | 'taken';

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
  /** How long a claim keeps a run from other replicas; it only has to cover one record lookup. */
  leaseMs?: number;
  batch?: number;
  clock?: Clock;
  observe?: (outcome: RunOutcome, lateMs: number) => void;
}

/**
 * Runs due schedules. Every replica runs one; they never coordinate in process: each pass claims
 * due runs in Redis (a claim is exclusive for its lease), moves each run to its next time only
 * while the claim still holds, and only then starts the chat. So a run starts at most one chat
 * whatever the number of replicas; a crash between the move and the chat loses that one run
 * rather than doubling it.
 */
export class Scheduler {
  readonly #o: Required<Omit<SchedulerOptions, 'observe'>> & Pick<SchedulerOptions, 'observe'>;
  #timer: NodeJS.Timeout | undefined;
  #current: Promise<void> | undefined;
  #stopped = false;

  constructor(options: SchedulerOptions) {
    this.#o = { leaseMs: 5_000, batch: 100, clock: () => new Date(), ...options };
  }

  start(): void {
    this.#stopped = false;
    this.#next(0);
  }

  /** Stops taking runs and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#current;
  }

  /** One pass: claims what is due and starts it; resolves with the number of runs claimed. */
  async tick(): Promise<number> {
    const runs = await this.#o.due.claim(this.#o.leaseMs, this.#o.batch);
    await Promise.all(runs.map((run) => this.#run(run)));
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

  async #run(run: DueRun): Promise<void> {
    try {
      const plan = planRun(run, this.#o.clock(), await this.#o.schedules.exists(run.userId, run.scheduleId));
      if (plan.kind === 'retry') {
        await this.#o.due.settle(run, plan.at);
      } else if (plan.kind === 'drop') {
        await this.#o.due.settle(run, null);
        this.#observe('skipped', run);
      } else if (await this.#o.due.settle(run, plan.next)) {
        await this.#startChat(run);
      } else {
        this.#observe('taken', run);
      }
    } catch (err) {
      // Claim still held: the run comes back when the lease ends.
      this.#o.logger.error({ err, scheduleId: run.scheduleId }, 'could not process a due run');
    }
  }

  /**
   * One attempt: CreateChat is not idempotent, so a call that may have reached the agents service
   * is never repeated (grpc-js itself retries calls that never left this process).
   */
  async #startChat(run: DueRun): Promise<void> {
    const scope = { userId: run.userId, requestId: `run-${run.scheduleId}-${run.dueAt}` };
    try {
      const chatId = await this.#o.agents.startChat(scope, run.agentId, SCHEDULED_TITLE);
      this.#o.logger.info({ scheduleId: run.scheduleId, agentId: run.agentId, chatId, lateMs: this.#late(run) }, 'scheduled run started a chat');
      this.#observe('started', run);
    } catch (err) {
      // The Agent went and the cascade is on its way; anything else is logged and this run skipped.
      const gone = isAppError(err) && err.code === 'AGENT_NOT_FOUND';
      this.#o.logger[gone ? 'info' : 'error']({ err, scheduleId: run.scheduleId, agentId: run.agentId }, 'scheduled run skipped: no chat started');
      this.#observe(gone ? 'skipped' : 'failed', run);
    }
  }

  #late(run: DueRun): number {
    return Math.max(0, this.#o.clock().getTime() - run.dueAt);
  }

  #observe(outcome: RunOutcome, run: DueRun): void {
    this.#o.observe?.(outcome, this.#late(run));
  }
}
