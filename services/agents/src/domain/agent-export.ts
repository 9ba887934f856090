import type { AliasRecord, AliasRepo } from './alias-ports.js';
import type { Agents } from './agents.js';
import type { AgentConfig, AgentRecord, AgentRepo, Scope } from './ports.js';

export interface ExportDocument {
  agent: AgentRecord;
  current: AgentConfig;
  /** Every kept config, oldest first. */
  configs: AgentConfig[];
  aliases: AliasRecord[];
}

/** What an export holds (docs/api/agents.md#export): every kept config oldest first, and every alias. */
export class AgentExport {
  readonly #repo: AgentRepo;
  readonly #aliases: AliasRepo;
  readonly #agents: Agents;

  constructor(options: { repo: AgentRepo; aliases: AliasRepo; agents: Agents }) {
    this.#repo = options.repo;
    this.#aliases = options.aliases;
    this.#agents = options.agents;
  }

  async export(scope: Scope, agentId: string): Promise<ExportDocument> {
    const { agent, config: current } = await this.#agents.get(scope, agentId);
    const [ids, aliases] = await Promise.all([this.#aliases.keptOldestFirst(scope.userId, agentId), this.#aliases.list(scope.userId, agentId)]);
    const configs: AgentConfig[] = [];
    for (const id of ids) {
      // A config reclaimed between the two reads is simply no longer kept.
      const config = await this.#repo.getConfig(scope.userId, id);
      if (config) configs.push(config);
    }
    return { agent, current, configs, aliases };
  }
}
