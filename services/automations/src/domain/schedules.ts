import { errors } from '@workspace/platform';
import { nextRunAfter, parseCronSpec } from './cron.js';
import { isId, newId } from './ids.js';
import type { AgentDirectory, Clock, Schedule, ScheduleRepo, ScheduleSummary, Scope } from './ports.js';

export interface ScheduleInput {
  cron: string;
  /** Default "UTC". */
  timezone?: string | undefined;
  /** Default true. */
  enabled?: boolean | undefined;
  /** Runs go through this alias of the Agent (docs/api/automations.md#aliases-in-runs). */
  alias?: string | undefined;
}

/** The Agent list asks for one page at a time (at most 100); anything larger is a bug or abuse. */
const MAX_SUMMARY_AGENTS = 1_000;

/** Schedules of an Agent (docs/api/automations.md#schedules): create, list, delete, and the list's summary. */
export class Schedules {
  readonly #repo: ScheduleRepo;
  readonly #agents: AgentDirectory;
  readonly #clock: Clock;
  readonly #max: number | undefined;

  /** `maxPerAgent`: MAX_SCHEDULES_PER_AGENT (docs/api/usage.md#quotas); unset: no limit. */
  constructor(deps: { repo: ScheduleRepo; agents: AgentDirectory; clock?: Clock; maxPerAgent?: number | undefined }) {
    this.#repo = deps.repo;
    this.#agents = deps.agents;
    this.#clock = deps.clock ?? (() => new Date());
    this.#max = deps.maxPerAgent;
  }

  /** Validates first (400 needs no remote call), then requires the Agent (404). */
  async create(scope: Scope, agentId: string, input: ScheduleInput): Promise<Schedule> {
    const now = this.#clock();
    const spec = parseCronSpec(input.cron, input.timezone ?? 'UTC', now);
    await this.#agents.require(scope, agentId, input.alias);
    const enabled = input.enabled ?? true;
    const next = enabled ? nextRunAfter(spec, now) : null;
    const record = { scheduleId: newId('sch'), agentId, cron: spec.cron, timezone: spec.timezone, enabled, createdAt: now.toISOString(), alias: input.alias ?? null };
    const outcome = await this.#repo.create(scope.userId, record, next?.getTime() ?? null, this.#max ?? 0);
    // The Agent was deleted between the check and the write; nothing was kept.
    if (outcome.status === 'agent-deleted') throw errors.notFound('agent', agentId);
    if (outcome.status === 'quota') throw errors.quotaExceeded('MAX_SCHEDULES_PER_AGENT', this.#max ?? 0, outcome.used);
    return { ...record, nextRunAt: next?.toISOString() ?? null };
  }

  async list(scope: Scope, agentId: string): Promise<Schedule[]> {
    await this.#agents.require(scope, agentId);
    return this.#repo.list(scope.userId, agentId);
  }

  async delete(scope: Scope, agentId: string, scheduleId: string): Promise<void> {
    await this.#agents.require(scope, agentId);
    const schedule = isId('sch', scheduleId) ? await this.#repo.get(scope.userId, scheduleId) : undefined;
    // Another Agent's schedule is not found under this one.
    if (!schedule || schedule.agentId !== agentId) throw errors.notFound('schedule', scheduleId);
    await this.#repo.delete(scope.userId, schedule);
  }

  /** No Agent check: the caller (the gateway's list) passes ids it just read for this user. */
  async summarize(scope: Scope, agentIds: readonly string[]): Promise<ScheduleSummary[]> {
    if (agentIds.length > MAX_SUMMARY_AGENTS) throw errors.invalidArgument(`at most ${MAX_SUMMARY_AGENTS} agent ids`, 'agentIds');
    return this.#repo.summarize(scope.userId, agentIds);
  }
}
