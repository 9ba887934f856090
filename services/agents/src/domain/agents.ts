import { createEvent, errors, type WorkspaceEvent } from '@workspace/platform';
import { buildConfig, sameAsCurrent, summarize } from './configs.js';
import { checkFields, editableOf, fieldsForCreate, type EditableFields, type FieldsInput, type KnowledgeFile, type KnowledgeRequest, type SubmittedFields } from './fields.js';
import { isId, newId } from './ids.js';
import type { AgentConfig, AgentRecord, AgentRepo, Clock, KnowledgeStore, ProjectDirectory, Scope } from './ports.js';
import { checkChangeNote } from './lineage.js';
import { expiredConfigs } from './retention.js';
import { charCount, hasLoneSurrogate, projectKey } from './text.js';

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
  /** MAX_AGENTS (docs/api/usage.md#quotas): the most Agents one user may have; unset: no limit. */
  maxAgents?: number | undefined;
  clock?: Clock;
}

/** CreateAgent's idempotency key: like CreateChat's, 1–200 characters. */
export const AGENT_IDEMPOTENCY_KEY_MAX = 200;

/** Agents and their immutable configurations (docs/api/agents.md), over a repository. */
export class Agents {
  readonly #repo: AgentRepo;
  readonly #projects: ProjectDirectory;
  readonly #knowledge: KnowledgeStore;
  readonly #retention: number;
  readonly #maxAgents: number | undefined;
  readonly #now: Clock;

  constructor(options: AgentsOptions) {
    this.#repo = options.repo;
    this.#projects = options.projects;
    this.#knowledge = options.knowledge;
    this.#retention = options.retention;
    this.#maxAgents = options.maxAgents;
    this.#now = options.clock ?? (() => new Date());
  }

  /** The user's Agents against MAX_AGENTS (docs/api/usage.md#usage); limit 0: none. */
  async usage(scope: Scope): Promise<{ count: number; limit: number }> {
    return { count: await this.#repo.count(scope.userId), limit: this.#maxAgents ?? 0 };
  }

  /**
   * With `idempotencyKey`, a repeat returns the Agent the first call made (while it exists)
   * instead of another. Refused with QUOTA_EXCEEDED when the user has MAX_AGENTS already; both
   * are decided in the same atomic write as the create (see AgentRepo.create).
   */
  async create(scope: Scope, input: FieldsInput, options: { idempotencyKey?: string | undefined; changeNote?: string | undefined } = {}): Promise<AgentView> {
    const { idempotencyKey } = options;
    const changeNote = checkChangeNote(options.changeNote);
    if (idempotencyKey !== undefined && (hasLoneSurrogate(idempotencyKey) || charCount(idempotencyKey) < 1 || charCount(idempotencyKey) > AGENT_IDEMPOTENCY_KEY_MAX)) {
      throw errors.invalidArgument(`idempotencyKey must be 1–${AGENT_IDEMPOTENCY_KEY_MAX} characters`, 'idempotencyKey');
    }
    const submitted = fieldsForCreate(input);
    const projectName = await this.#projects.resolve(scope, submitted.projectName);
    const agentId = newId('agt');
    const fields: EditableFields = { ...submitted, projectName, knowledgeFiles: await this.#pin(scope, agentId, submitted.knowledgeFiles) };
    const at = this.#now().toISOString();
    const config = buildConfig(agentId, fields, at, { changeNote });
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
    const events = [this.#configEvent('agent.created', scope, config)];
    const outcome = await this.#repo.create({ userId: scope.userId, agent, config, events, maxAgents: this.#maxAgents, idempotencyKey });
    if (outcome.status === 'quota') throw errors.quotaExceeded('MAX_AGENTS', this.#maxAgents ?? 0, outcome.used);
    if (outcome.status === 'exists') return this.get(scope, outcome.agentId);
    return { agent, config };
  }

  async get(scope: Scope, agentId: string): Promise<AgentView> {
    let agent = await this.require(scope, agentId);
    // A config read after its Agent may be gone: deleted with the Agent, or (retention) after
    // an update made another one current. Look at the Agent again: gone is AGENT_NOT_FOUND.
    for (let attempt = 0; attempt < 3; attempt++) {
      const config = await this.#repo.getConfig(scope.userId, agent.currentConfigId);
      if (config) return { agent, config };
      const now = await this.require(scope, agentId);
      if (now.currentConfigId === agent.currentConfigId) break;
      agent = now;
    }
    throw errors.internal(new Error(`config ${agent.currentConfigId} of ${agentId} is missing`));
  }

  /**
   * docs/api/agents.md#update, in this order: (1) nothing submitted differs from the current config
   * → it, unchanged; (2) a stale `baseConfigId` → STALE_AGENT_CONFIG; (3) a new config becomes
   * current in one compare-and-set, so of concurrent updates on one base exactly one wins.
   * Submitted knowledge files are copied first and compared in stored form: the same paths
   * with the same bytes are unchanged, the same paths with new bytes are a change.
   */
  async update(scope: Scope, agentId: string, baseConfigId: string, input: FieldsInput, options: { changeNote?: string | undefined } = {}): Promise<AgentView> {
    const submitted = checkFields(input);
    const changeNote = checkChangeNote(options.changeNote);
    if (!baseConfigId) throw errors.invalidArgument('baseConfigId is required', 'baseConfigId');
    const current = await this.get(scope, agentId);
    const changes = await this.#withKnowledge(scope, agentId, submitted);
    if (sameAsCurrent(changes, current.config)) return current;
    if (baseConfigId !== current.agent.currentConfigId) throw errors.staleConfig(current.agent.currentConfigId);

    const fields = { ...editableOf(current.config), ...changes };
    const rebinds = changes.projectName !== undefined && projectKey(changes.projectName) !== projectKey(current.config.projectName);
    fields.projectName = rebinds ? await this.#projects.resolve(scope, fields.projectName) : current.config.projectName;
    const config = buildConfig(agentId, fields, this.#now().toISOString(), { changeNote, parentConfigId: baseConfigId });
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


  #configEvent(type: 'agent.created' | 'agent.updated', scope: Scope, config: AgentConfig): WorkspaceEvent {
    return createEvent(type, {
      source: EVENT_SOURCE,
      subject: config.agentId,
      time: config.createdAt,
      data: { userId: scope.userId, agentId: config.agentId, configId: config.configId, projectName: config.projectName },
    });
  }

  /**
   * For chats: a config the Agent's chat pins. Pinned configs go only with their Agent, so a
   * miss is a DELETE that came in between: AGENT_NOT_FOUND; with the Agent still there it is a
   * broken invariant.
   */
  async config(scope: Scope, agentId: string, configId: string): Promise<AgentConfig> {
    const config = await this.#repo.getConfig(scope.userId, configId);
    if (config) return config;
    await this.require(scope, agentId);
    throw errors.internal(new Error(`config ${configId} of ${agentId} is missing`));
  }
}
