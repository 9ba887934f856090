import jsonPatch, { type Operation } from 'fast-json-patch';
import { errors } from '@workspace/platform';
import type { AliasRepo } from './alias-ports.js';
import type { Agents } from './agents.js';
import { editableOf } from './fields.js';
import { isId } from './ids.js';
import type { AgentConfig, AgentRepo, Scope } from './ports.js';

/** One RFC 6902 operation, as fast-json-patch builds it. */
export type PatchOperation = Operation;

export interface VersionDiff {
  from: string;
  to: string;
  operations: PatchOperation[];
}

/** One configuration by id, and diffs between two (docs/api/agents.md#diffs). */
export class Versions {
  readonly #repo: AgentRepo;
  readonly #aliases: AliasRepo;
  readonly #agents: Agents;

  constructor(options: { repo: AgentRepo; aliases: AliasRepo; agents: Agents }) {
    this.#repo = options.repo;
    this.#aliases = options.aliases;
    this.#agents = options.agents;
  }

  /**
   * A config still kept for the Agent; CONFIG_NOT_FOUND otherwise. Kept-ness is read from the
   * Agent's config set, never from a cache, so a config retention reclaimed is gone everywhere.
   */
  async get(scope: Scope, agentId: string, configId: string): Promise<AgentConfig> {
    await this.#agents.require(scope, agentId);
    if (!isId('cfg', configId) || !(await this.#aliases.isKept(scope.userId, agentId, configId))) throw errors.notFound('config', configId);
    const config = await this.#repo.getConfig(scope.userId, configId);
    if (!config || config.agentId !== agentId) throw errors.notFound('config', configId);
    return config;
  }

  /** The patch from `fromId` (default: `toId`'s parent) to `toId`, over the editable fields. */
  async diff(scope: Scope, agentId: string, toId: string, fromId?: string): Promise<VersionDiff> {
    const to = await this.get(scope, agentId, toId);
    const source = fromId ?? to.parentConfigId ?? undefined;
    if (source === undefined) throw errors.invalidArgument('this is the first configuration: name the one to compare with in `from`', 'from');
    const from = await this.get(scope, agentId, source);
    return { from: from.configId, to: to.configId, operations: diffFields(from, to) };
  }
}

/** RFC 6902 operations that turn `from`'s editable fields into `to`'s. */
export function diffFields(from: AgentConfig, to: AgentConfig): PatchOperation[] {
  return jsonPatch.compare(editableOf(from), editableOf(to));
}
