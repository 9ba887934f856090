import { AppError, errors, isAppError, lineageCycle, parsePath, type WorkspaceEvent } from '@workspace/platform';
import type { AliasRecord } from './alias-ports.js';
import { ALIAS_DESCRIPTION_MAX, ALIAS_NAME } from './aliases.js';
import { EVENT_SOURCE } from './agents.js';
import { summarize } from './configs.js';
import { contentDigest, SCHEMA_VERSION } from './digest.js';
import { editableOf, fieldsForCreate, type EditableFields, type FieldsInput, type KnowledgeFile } from './fields.js';
import { isId, newId } from './ids.js';
import { checkChangeNote } from './lineage.js';
import type { AgentConfig, AgentRecord, Clock, CreateAgentOutcome, KnowledgeStore, ProjectDirectory, Scope, StagedKnowledge } from './ports.js';
import { normalizeText, projectKey } from './text.js';
import { createEvent } from '@workspace/platform';
import { checkRouting, primaryOf, type RouteEntry } from './rollout.js';

/** Configs one import may carry when no retention bounds it lower: far fewer than could hurt. */
export const MAX_IMPORTED_CONFIGS = 1_000;
/**
 * How far a config's `createdAt` may lie ahead of this service's clock (the clocks of the
 * exporting and the importing deployment may differ a little); further ahead is refused.
 */
export const CREATED_AT_SKEW_MS = 5 * 60_000;
const SHA256 = /^[0-9a-f]{64}$/;

/** A config as the archive holds it: editable fields (knowledge in stored form) and its lineage. */
export interface ImportedConfig {
  configId: string;
  parentConfigId: string | null;
  changeNote: string;
  createdAt: string;
  fields: FieldsInput;
}

export interface ImportInput {
  configs: ImportedConfig[];
  /** `routing`: null or empty for a plain alias (docs/api/agents.md#rollout). */
  aliases: { alias: string; configId: string; description: string; routing?: RouteEntry[] | null | undefined }[];
  projectName?: string | undefined;
  idempotencyKey?: string | undefined;
  knowledge: StagedKnowledge[];
}

export interface NewImportedAgent {
  userId: string;
  agent: AgentRecord;
  /** Oldest first. */
  configs: AgentConfig[];
  aliases: AliasRecord[];
  events: WorkspaceEvent[];
  maxAgents?: number | undefined;
  idempotencyKey?: string | undefined;
}

/** Writes an imported Agent whole, atomically with the MAX_AGENTS check and the idempotency key. */
export interface ImportRepo {
  create(request: NewImportedAgent): Promise<CreateAgentOutcome>;
}

/** A new Agent from an export (docs/api/agents.md#import): new ids, the same history in order, the same aliases. */
export class AgentImport {
  readonly #o: { repo: ImportRepo; projects: ProjectDirectory; knowledge: KnowledgeStore; maxAgents?: number | undefined; maxAliases: number; maxConfigs: number; clock: Clock };

  /** `maxConfigs`: CONFIG_RETENTION, the most configs an Agent keeps (an import may not bring more). */
  constructor(options: { repo: ImportRepo; projects: ProjectDirectory; knowledge: KnowledgeStore; maxAgents?: number | undefined; maxAliases: number; maxConfigs?: number; clock?: Clock }) {
    this.#o = { clock: () => new Date(), maxConfigs: MAX_IMPORTED_CONFIGS, ...options };
  }

  /** Checks everything first; nothing is written unless all of it is valid. Returns the new Agent's id. */
  async import(scope: Scope, input: ImportInput): Promise<{ agentId: string; created: boolean }> {
    const most = Math.min(this.#o.maxConfigs, MAX_IMPORTED_CONFIGS);
    if (input.configs.length < 1 || input.configs.length > most) throw errors.invalidArgument(`configs must hold 1–${most} configurations (CONFIG_RETENTION)`, 'configs');
    const staged = new Map(input.knowledge.map((k) => [k.sha256, k]));
    const latest = this.#o.clock().getTime() + CREATED_AT_SKEW_MS;
    const checked = input.configs.map((c, i) => checkConfig(c, `configs[${i}]`, staged, latest));
    const ids = new Map<string, string>();
    checked.forEach((c, i) => {
      if (ids.has(c.configId)) throw errors.invalidArgument('configId appears twice', `configs[${i}].configId`);
      ids.set(c.configId, newId('cfg'));
    });
    const cycle = lineageCycle(checked);
    if (cycle !== undefined) throw errors.invalidArgument('parentConfigId leads back to this configuration (the lineage must not be a cycle)', `configs[${cycle}].parentConfigId`);
    const aliases = checkAliases(input.aliases, ids, this.#o.maxAliases);
    const projects = await this.#projects(scope, checked, input.projectName);

    const agentId = newId('agt');
    const configs: AgentConfig[] = checked.map((c) => {
      const fields: EditableFields = { ...c.fields, projectName: projects.get(projectKey(input.projectName ?? c.fields.projectName))! };
      const content = editableOf(fields);
      return {
        schemaVersion: SCHEMA_VERSION, configId: ids.get(c.configId)!, agentId, ...content, normalizedName: normalizeText(content.name),
        createdAt: c.createdAt, contentDigest: contentDigest(content), changeNote: c.changeNote,
        // A parent that retention reclaimed before the export is not in the archive: the lineage starts there.
        parentConfigId: c.parentConfigId === null ? null : (ids.get(c.parentConfigId) ?? null),
      };
    });
    const current = configs[configs.length - 1]!;
    const at = this.#o.clock().toISOString();
    const agent: AgentRecord = { agentId, currentConfigId: current.configId, state: 'active', createdAt: at, updatedAt: at, lastChatAt: null, chatCount: 0, summary: summarize(current) };
    const records: AliasRecord[] = aliases.map((a) => ({
      alias: a.alias, agentId, configId: ids.get(a.configId)!, description: a.description, createdAt: at, updatedAt: at,
      routing: a.routing ? a.routing.map((e) => ({ configId: ids.get(e.configId)!, weight: e.weight })) : null,
    }));
    const event = createEvent('agent.created', { source: EVENT_SOURCE, subject: agentId, time: at, data: { userId: scope.userId, agentId, configId: current.configId, projectName: current.projectName } });

    await this.#o.knowledge.pinStaged(scope, agentId, [...staged.values()]);
    const outcome = await this.#o.repo.create({ userId: scope.userId, agent, configs, aliases: records, events: [event], maxAgents: this.#o.maxAgents, idempotencyKey: input.idempotencyKey });
    if (outcome.status === 'created') return { agentId, created: true };
    // The Agent will not exist: what was pinned for it goes (it would count against the byte quota for good).
    if (staged.size > 0) await this.#o.knowledge.unpinAll(scope, agentId);
    if (outcome.status === 'quota') throw errors.quotaExceeded('MAX_AGENTS', this.#o.maxAgents ?? 0, outcome.used);
    return { agentId: outcome.agentId, created: false };
  }

  /** The stored spelling of every project the configs name (or of the override), each looked up once. */
  async #projects(scope: Scope, configs: { fields: EditableFields }[], override: string | undefined): Promise<Map<string, string>> {
    const names = override !== undefined ? [override] : [...new Set(configs.map((c) => c.fields.projectName))];
    const out = new Map<string, string>();
    for (const name of names) {
      if (!out.has(projectKey(name))) out.set(projectKey(name), await this.#o.projects.resolve(scope, name));
    }
    return out;
  }
}

function checkConfig(c: ImportedConfig, at: string, staged: ReadonlyMap<string, StagedKnowledge>, latest: number): { configId: string; parentConfigId: string | null; changeNote: string; createdAt: string; fields: EditableFields } {
  if (!isId('cfg', c.configId)) throw errors.invalidArgument('must be cfg_ followed by 32 lowercase hex digits', `${at}.configId`);
  if (c.parentConfigId !== null && !isId('cfg', c.parentConfigId)) throw errors.invalidArgument('must be null or a config id', `${at}.parentConfigId`);
  if (Number.isNaN(Date.parse(c.createdAt)) || new Date(c.createdAt).toISOString() !== c.createdAt) throw errors.invalidArgument('must be an ISO 8601 UTC timestamp with milliseconds', `${at}.createdAt`);
  if (Date.parse(c.createdAt) > latest) throw errors.invalidArgument(`must not lie in the future (more than ${CREATED_AT_SKEW_MS / 60_000} minutes ahead)`, `${at}.createdAt`);
  const changeNote = withPrefix(at, () => checkChangeNote(c.changeNote));
  const { knowledgeFiles, ...rest } = c.fields;
  const fields = withPrefix(at, () => fieldsForCreate(rest));
  const knowledge = checkKnowledge(knowledgeFiles, `${at}.knowledgeFiles`, staged);
  return { configId: c.configId, parentConfigId: c.parentConfigId, changeNote, createdAt: c.createdAt, fields: { ...fields, knowledgeFiles: knowledge } };
}

function checkKnowledge(value: unknown, at: string, staged: ReadonlyMap<string, StagedKnowledge>): KnowledgeFile[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 20) throw errors.invalidArgument('must be an array of at most 20 knowledge files', at);
  return value.map((k: unknown, i) => {
    const f = (k ?? {}) as Partial<KnowledgeFile>;
    const field = `${at}[${i}]`;
    if (typeof f.path !== 'string' || !isStoredPath(f.path)) throw errors.invalidArgument('path must name a workspace file under the path rules (/files/…)', `${field}.path`);
    if (typeof f.mimeType !== 'string' || f.mimeType.length > 255) throw errors.invalidArgument('mimeType must be a string', `${field}.mimeType`);
    if (typeof f.sha256 !== 'string' || !SHA256.test(f.sha256)) throw errors.invalidArgument('sha256 must be 64 lowercase hex digits', `${field}.sha256`);
    const bytes = staged.get(f.sha256);
    if (!bytes) throw errors.invalidArgument(`the archive holds no knowledge/${f.sha256}`, `${field}.sha256`);
    if (f.size !== bytes.size) throw errors.invalidArgument(`size must be that of knowledge/${f.sha256} (${bytes.size})`, `${field}.size`);
    return { path: f.path, size: f.size, sha256: f.sha256, mimeType: f.mimeType };
  });
}

function checkAliases(input: ImportInput['aliases'], ids: ReadonlyMap<string, string>, max: number): ImportInput['aliases'] {
  const aliases = input.map((a) => ({ ...a, routing: a.routing && a.routing.length > 0 ? a.routing : null }));
  if (aliases.length > max) throw errors.invalidArgument(`at most ${max} aliases (MAX_ALIASES_PER_AGENT)`, 'aliases');
  const seen = new Set<string>();
  aliases.forEach((a, i) => {
    if (!ALIAS_NAME.test(a.alias) || seen.has(a.alias)) throw errors.invalidArgument('must be a distinct alias name (a–z 0–9 - _, 1–64)', `aliases[${i}].alias`);
    seen.add(a.alias);
    if (!ids.has(a.configId)) throw errors.invalidArgument('must name a config of the archive', `aliases[${i}].configId`);
    if (a.routing && a.routing.length > 0) {
      const routing = checkRouting(a.routing, `aliases[${i}].routing`);
      routing.forEach((e, j) => {
        if (!ids.has(e.configId)) throw errors.invalidArgument('must name a config of the archive', `aliases[${i}].routing[${j}].configId`);
      });
      if (primaryOf(routing) !== a.configId) throw errors.invalidArgument('must be the routing entry of greatest weight (the first on ties)', `aliases[${i}].configId`);
    }
    if ([...a.description].length > ALIAS_DESCRIPTION_MAX) throw errors.invalidArgument(`must be at most ${ALIAS_DESCRIPTION_MAX} characters`, `aliases[${i}].description`);
  });
  return aliases;
}

/** Whether `path` is a file path under the workspace path rules, in its stored (normalized) form. */
function isStoredPath(path: string): boolean {
  try {
    const parsed = parsePath(path);
    return parsed.segments.length > 0 && parsed.path === path;
  } catch {
    return false;
  }
}

/** Names a field error of one config by its place in the archive (`configs[3].name`). */
function withPrefix<T>(at: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!isAppError(err) || err.code !== 'INVALID_ARGUMENT') throw err;
    const field = err.details?.field;
    throw new AppError('INVALID_ARGUMENT', err.message, { details: { field: field ? `${at}.${field}` : at }, cause: err });
  }
}
