import { createEvent, errors, type WorkspaceEvent } from '@workspace/platform';
import { buildConfig, sameAsCurrent, summarize } from './configs.js';
import { checkFields, editableOf, fieldsForCreate, type EditableFields, type FieldsInput, type KnowledgeFile, type KnowledgeRequest, type SubmittedFields } from './fields.js';
import { isId, newId } from './ids.js';
import type { AgentConfig, AgentRecord, AgentRepo, Clock, KnowledgeStore, ProjectDirectory, Scope } from './ports.js';
import { expiredConfigs } from './retention.js';
import { projectKey } from './text.js';

/** The source of the events this service publishes (CloudEvents `source`). */
export const EVENT_SOURCE = '/workspace/agents';
export const VERSIONS_LIMIT = 100;

export interface AgentView {
  agent: AgentRecord;
  config: AgentConfig;
}

export interface AgentsOptions {
  repo: AgentRepo;
  projects: ProjectDirectory;
  /** Copies knowledge files when a config is written. */
  knowledge: KnowledgeStore;
  /** Configs kept per Agent beyond which the oldest unpinned ones are deleted. */
  retention: number;
  clock?: Clock;
}

/** Agents and their immutable configurations (CONTRACT §6), over a repository. */
export class Agents {
  readonly #repo: AgentRepo;
  readonly #projects: ProjectDirectory;
  readonly #knowledge: KnowledgeStore;
  readonly #retention: number;
  readonly #now: Clock;

  constructor(options: AgentsOptions) {
    this.#repo = options.repo;
    this.#projects = options.projects;
    this.#knowledge = options.knowledge;
    this.#retention = options.retention;
    this.#now = options.clock ?? (() => new Date());
  }

  async create(scope: Scope, input: FieldsInput): Promise<AgentView> {
    const submitted = fieldsForCreate(input);
    const projectName = await this.#projects.resolve(scope, submitted.projectName);
    const agentId = newId('agt');
    const fields: EditableFields = { ...submitted, projectName, knowledgeFiles: await this.#pin(scope, agentId, submitted.knowledgeFiles) };
    const at = this.#now().toISOString();
    const config = buildConfig(agentId, fields, at);
    const agent: AgentRecord = {
      agentId,
      currentConfigId: config.configId,
      state: 'active',
      createdAt: at,
      updatedAt: at,
      lastChatAt: null,
      chatCount: 0,
      summary: summarize(config),
    };
    await this.#repo.create(scope.userId, agent, config, [this.#configEvent('agent.created', scope, config)]);
    return { agent, config };
  }

  async get(scope: Scope, agentId: string): Promise<AgentView> {
    const agent = await this.require(scope, agentId);
    return { agent, config: await this.#config(scope, agent.currentConfigId) };
  }

  /**
   * CONTRACT §6, in this order: (1) nothing submitted differs from the current config → it,
   * unchanged; (2) a stale `baseConfigId` → STALE_AGENT_CONFIG; (3) a new config becomes current
   * in one compare-and-set, so of concurrent updates on one base exactly one wins.
   * Submitted knowledge files are copied first and compared in stored form: the same paths
   * with the same bytes are unchanged, the same paths with new bytes are a change.
   */
  async update(scope: Scope, agentId: string, baseConfigId: string, input: FieldsInput): Promise<AgentView> {
    const submitted = checkFields(input);
    if (!baseConfigId) throw errors.invalidArgument('baseConfigId is required', 'baseConfigId');
    const current = await this.get(scope, agentId);
    const changes = await this.#withKnowledge(scope, agentId, submitted);
    if (sameAsCurrent(changes, current.config)) return current;
    if (baseConfigId !== current.agent.currentConfigId) throw errors.staleConfig(current.agent.currentConfigId);

    const fields = { ...editableOf(current.config), ...changes };
    const rebinds = changes.projectName !== undefined && projectKey(changes.projectName) !== projectKey(current.config.projectName);
    fields.projectName = rebinds ? await this.#projects.resolve(scope, fields.projectName) : current.config.projectName;
    const config = buildConfig(agentId, fields, this.#now().toISOString());
    const result = await this.#repo.commitConfig(scope.userId, {
      agentId,
      baseConfigId,
      config,
      summary: summarize(config),
      expire: (oldestFirst, pinned) => expiredConfigs({ oldestFirst, pinned, currentConfigId: config.configId, retention: this.#retention }),
      events: [this.#configEvent('agent.updated', scope, config)],
    });
    if (result.status === 'gone') throw errors.notFound('agent', agentId);
    if (result.status === 'stale') throw errors.staleConfig(result.currentConfigId);
    return { agent: result.agent, config };
  }

  /** The submitted fields with their knowledge files (if any) copied and in stored form. */
  async #withKnowledge(scope: Scope, agentId: string, submitted: Partial<SubmittedFields>): Promise<Partial<EditableFields>> {
    const { knowledgeFiles, ...rest } = submitted;
    return knowledgeFiles === undefined ? rest : { ...rest, knowledgeFiles: await this.#pin(scope, agentId, knowledgeFiles) };
  }

  #pin(scope: Scope, agentId: string, files: KnowledgeRequest[]): Promise<KnowledgeFile[]> {
    return files.length === 0 ? Promise.resolve([]) : this.#knowledge.pin(scope, agentId, files.map((f) => f.path));
  }

  /** The newest configurations (at most 100), newest first; the current one among them. */
  async versions(scope: Scope, agentId: string): Promise<AgentConfig[]> {
    await this.require(scope, agentId);
    return this.#repo.listVersions(scope.userId, agentId, VERSIONS_LIMIT);
  }

  /** Removes the Agent, its configs and chats, and queues `agent.deleted` for the owners of the rest. */
  async delete(scope: Scope, agentId: string): Promise<void> {
    const event = createEvent('agent.deleted', {
      source: EVENT_SOURCE,
      subject: agentId,
      time: this.#now().toISOString(),
      data: { userId: scope.userId, agentId },
    });
    if (!isId('agt', agentId) || !(await this.#repo.delete(scope.userId, agentId, [event]))) throw errors.notFound('agent', agentId);
  }

  /** The Agent, or AGENT_NOT_FOUND (also for another user's Agent and malformed ids). */
  async require(scope: Scope, agentId: string): Promise<AgentRecord> {
    const agent = isId('agt', agentId) ? await this.#repo.get(scope.userId, agentId) : undefined;
    if (!agent) throw errors.notFound('agent', agentId);
    return agent;
  }

  async #config(scope: Scope, configId: string): Promise<AgentConfig> {
    const config = await this.#repo.getConfig(scope.userId, configId);
    // The current config and every pinned one are never deleted: a miss is a broken invariant.
    if (!config) throw errors.internal(new Error(`config ${configId} is missing`));
    return config;
  }

  #configEvent(type: 'agent.created' | 'agent.updated', scope: Scope, config: AgentConfig): WorkspaceEvent {
    return createEvent(type, {
      source: EVENT_SOURCE,
      subject: config.agentId,
      time: config.createdAt,
      data: { userId: scope.userId, agentId: config.agentId, configId: config.configId, projectName: config.projectName },
    });
  }

  /** Exposed for chats: a config by id, which must exist. */
  config(scope: Scope, configId: string): Promise<AgentConfig> {
    return this.#config(scope, configId);
  }
}
