import { AppError, errors } from '@workspace/platform';
import type { AliasHistoryEntry, AliasRecord, AliasRepo, AliasStats } from './alias-ports.js';
import type { Agents } from './agents.js';
import { isId } from './ids.js';
import type { AgentConfig, Clock, Scope } from './ports.js';
import { checkRouting, malformedConfigId, primaryOf, type RouteEntry } from './rollout.js';
import { charCount, hasLoneSurrogate } from './text.js';

/** Alias names (docs/api/agents.md#aliases): 1–64 of a–z 0–9 - _, starting with a letter or digit. */
export const ALIAS_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ALIAS_DESCRIPTION_MAX = 1_000;

export interface PutAliasInput {
  /** Exactly one of `configId` (not empty) and `routing` (not empty) (docs/api/agents.md#rollout). */
  configId?: string | undefined;
  routing?: readonly RouteEntry[] | undefined;
  description?: string | undefined;
  ifMatch?: string | undefined;
}

/** Aliases of an Agent: named pointers at its configs, moved by compare-and-set (docs/api/agents.md#aliases). */
export class Aliases {
  readonly #repo: AliasRepo;
  readonly #agents: Agents;
  readonly #max: number;
  readonly #now: Clock;

  constructor(options: { repo: AliasRepo; agents: Agents; maxAliases: number; clock?: Clock }) {
    this.#repo = options.repo;
    this.#agents = options.agents;
    this.#max = options.maxAliases;
    this.#now = options.clock ?? (() => new Date());
  }

  /** Creates or moves the alias; `created` tells which. Atomic with the quota and the If-Match check. */
  async put(scope: Scope, agentId: string, alias: string, input: PutAliasInput): Promise<{ alias: AliasRecord; created: boolean }> {
    checkName(alias);
    const description = input.description ?? '';
    if (hasLoneSurrogate(description) || charCount(description) > ALIAS_DESCRIPTION_MAX) {
      throw errors.invalidArgument(`description must be at most ${ALIAS_DESCRIPTION_MAX} characters`, 'description');
    }
    const target = targetOf(input);
    await this.#agents.require(scope, agentId);
    const malformed = target.routing ? malformedConfigId(target.routing) : isId('cfg', target.configId) ? undefined : target.configId;
    if (malformed !== undefined) throw errors.notFound('config', malformed);
    const outcome = await this.#repo.put({
      userId: scope.userId, agentId, alias, ...target, description, ifMatch: input.ifMatch, at: this.#now().toISOString(), maxAliases: this.#max,
    });
    switch (outcome.status) {
      case 'created':
      case 'moved':
        return { alias: outcome.alias, created: outcome.status === 'created' };
      case 'precondition':
        throw outcome.currentConfigId === undefined
          ? new AppError('PRECONDITION_FAILED', `alias ${alias} does not exist, so If-Match cannot match`)
          : errors.preconditionFailed(outcome.currentConfigId);
      case 'quota':
        throw errors.quotaExceeded('MAX_ALIASES_PER_AGENT', this.#max, outcome.used);
      case 'agent-gone':
        throw errors.notFound('agent', agentId);
      case 'config-gone':
        throw errors.notFound('config', outcome.configId);
    }
  }

  async get(scope: Scope, agentId: string, alias: string): Promise<AliasRecord> {
    await this.#agents.require(scope, agentId);
    const record = ALIAS_NAME.test(alias) ? await this.#repo.get(scope.userId, agentId, alias) : undefined;
    if (!record) throw errors.notFound('alias', alias);
    return record;
  }

  /** The alias with the config it names now. */
  async resolve(scope: Scope, agentId: string, alias: string): Promise<{ alias: AliasRecord; config: AgentConfig }> {
    const record = await this.get(scope, agentId, alias);
    return { alias: record, config: await this.#agents.config(scope, agentId, record.configId) };
  }

  async list(scope: Scope, agentId: string): Promise<AliasRecord[]> {
    await this.#agents.require(scope, agentId);
    return this.#repo.list(scope.userId, agentId);
  }

  async history(scope: Scope, agentId: string, alias: string): Promise<AliasHistoryEntry[]> {
    await this.#agents.require(scope, agentId);
    const history = ALIAS_NAME.test(alias) ? await this.#repo.history(scope.userId, agentId, alias) : undefined;
    if (!history) throw errors.notFound('alias', alias);
    return history;
  }

  /** Chats started through the alias per config in its current period (docs/api/agents.md#rollout). */
  async stats(scope: Scope, agentId: string, alias: string): Promise<AliasStats> {
    await this.#agents.require(scope, agentId);
    const stats = ALIAS_NAME.test(alias) ? await this.#repo.stats(scope.userId, agentId, alias) : undefined;
    if (!stats) throw errors.notFound('alias', alias);
    return stats;
  }

  async delete(scope: Scope, agentId: string, alias: string): Promise<void> {
    await this.#agents.require(scope, agentId);
    if (!ALIAS_NAME.test(alias) || !(await this.#repo.delete(scope.userId, agentId, alias))) throw errors.notFound('alias', alias);
  }
}

/** What the alias will name: one config, or a checked routing and its primary config. */
function targetOf(input: PutAliasInput): { configId: string; routing: RouteEntry[] | null } {
  const hasConfig = input.configId !== undefined && input.configId !== '';
  const hasRouting = input.routing !== undefined && input.routing.length > 0;
  if (hasConfig && hasRouting) throw errors.invalidArgument('send configId or routing, not both', 'routing');
  if (hasRouting) {
    const routing = checkRouting(input.routing!);
    return { configId: primaryOf(routing), routing };
  }
  if (!hasConfig) throw errors.invalidArgument('configId (or routing) is required', 'configId');
  return { configId: input.configId!, routing: null };
}

function checkName(alias: string): void {
  if (!ALIAS_NAME.test(alias)) throw errors.invalidArgument('alias must be 1–64 of a–z 0–9 - _, starting with a letter or digit', 'alias');
}
