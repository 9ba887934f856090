import { AGENT_FIELD_NAMES, AGENT_FIELDS, checkJsonValue, errors, type AgentFieldName, type AgentFieldSpec, type RESPONSE_MODES, type THREAD_CREATION_MODES } from '@workspace/platform';
import { charCount, hasLoneSurrogate } from './text.js';

export { RESPONSE_MODES, THREAD_CREATION_MODES } from '@workspace/platform';
export type ResponseMode = (typeof RESPONSE_MODES)[number];
export type ThreadCreationMode = (typeof THREAD_CREATION_MODES)[number];

/** A knowledge file as submitted: the path of a workspace file of the user. */
export interface KnowledgeRequest {
  path: string;
}

/**
 * A knowledge file as stored (docs/api/agents.md#knowledge): its bytes were pinned for the Agent (a
 * reference to the immutable object) when the config was written, so the config pins this exact
 * content.
 */
export interface KnowledgeFile {
  path: string;
  size: number;
  sha256: string;
  mimeType: string;
}

/** A connector: any JSON object with a string `type`. */
export type Connector = { type: string } & Record<string, unknown>;

/** The editable fields of a configuration (docs/api/agents.md#editable-fields), as stored. */
export interface EditableFields {
  name: string;
  description: string;
  goal: string;
  instructions: string;
  conversationStarters: string[];
  responseMode: ResponseMode;
  projectName: string;
  threadManagementEnabled: boolean;
  threadCreationMode: ThreadCreationMode;
  knowledgeFiles: KnowledgeFile[];
  skills: string[] | null;
  connectors: Connector[] | null;
}

/** In declaration order (docs/api/agents.md#editable-fields): the order diffs compare them in. */
export const EDITABLE_FIELDS: readonly (keyof EditableFields)[] = AGENT_FIELD_NAMES;

export const DEFAULTS = Object.fromEntries(
  AGENT_FIELD_NAMES.filter((k) => k !== 'name').map((k) => [k, AGENT_FIELDS[k].default]),
) as unknown as Omit<EditableFields, 'name'>;

/** What a caller submits: any subset of the fields, not yet checked. */
export type FieldsInput = { [K in keyof EditableFields]?: unknown };

/** Checked fields before the knowledge files are copied: those are still paths. */
export type SubmittedFields = Omit<EditableFields, 'knowledgeFiles'> & { knowledgeFiles: KnowledgeRequest[] };

const fail = (field: string, why: string): never => {
  throw errors.invalidArgument(`${field} ${why}`, field);
};

function text(value: unknown, field: string, min: number, max: number): string {
  if (typeof value !== 'string') return fail(field, 'must be a string');
  if (hasLoneSurrogate(value)) fail(field, 'must be valid Unicode');
  const n = charCount(value);
  if (n < min || n > max) fail(field, min > 0 ? `must be ${min}–${max} characters` : `must be at most ${max} characters`);
  return value;
}

function list(value: unknown, field: string, max: number): unknown[] {
  if (!Array.isArray(value)) return fail(field, 'must be an array');
  if (value.length > max) fail(field, `must have at most ${max} elements`);
  return value;
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) return fail(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** The shape only: the files service applies the path rules (INVALID_PATH) when it copies the file. */
function knowledgeFile(value: unknown, field: string, pathMax: number): KnowledgeRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(field, 'must be an object {path}');
  const extra = Object.keys(value).find((k) => k !== 'path');
  if (extra !== undefined) fail(`${field}.${extra}`, 'is not a known field');
  return { path: text((value as { path?: unknown }).path, `${field}.path`, 1, pathMax) };
}

function connector(value: unknown, field: string, limits: { maxBytes: number; maxDepth: number }): Connector {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(field, 'must be an object');
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || type.length === 0) fail(`${field}.type`, 'must be a non-empty string');
  // Checked first, without recursion: what follows (JSON text, the digest) recurses.
  const problem = checkJsonValue(value, limits.maxDepth);
  if (problem === 'too-deep') fail(field, `must be nested at most ${limits.maxDepth} levels deep`);
  if (problem === 'not-finite') fail(field, 'must hold finite numbers only');
  const json = JSON.stringify(value);
  if (hasLoneSurrogate(json)) fail(field, 'must be valid Unicode');
  if (Buffer.byteLength(json, 'utf8') > limits.maxBytes) fail(field, `must be at most ${limits.maxBytes} bytes of JSON`);
  return value as Connector;
}

/** The check of one field, from its declaration (the messages are this service's own). */
function checkerOf(spec: AgentFieldSpec): (value: unknown, field: string) => unknown {
  switch (spec.kind) {
    case 'text':
      return spec.trim ? (v, f) => text(typeof v === 'string' ? v.trim() : v, f, spec.min, spec.max) : (v, f) => text(v, f, spec.min, spec.max);
    case 'enum':
      return (v, f) => oneOf(v, f, spec.values);
    case 'boolean':
      return (v, f) => (typeof v === 'boolean' ? v : fail(f, 'must be a boolean'));
    case 'textList': {
      const check = (v: unknown, f: string) => list(v, f, spec.maxItems).map((s, i) => text(s, `${f}[${i}]`, spec.min, spec.max));
      return spec.nullable ? (v, f) => (v === null ? null : check(v, f)) : check;
    }
    case 'knowledgeList':
      return (v, f) => list(v, f, spec.maxItems).map((k, i) => knowledgeFile(k, `${f}[${i}]`, spec.pathMax));
    case 'connectorList':
      return (v, f) => (v === null ? null : list(v, f, spec.maxItems).map((c, i) => connector(c, `${f}[${i}]`, spec)));
  }
}

const CHECK = Object.fromEntries(AGENT_FIELD_NAMES.map((k) => [k, checkerOf(AGENT_FIELDS[k])])) as Record<AgentFieldName, (value: unknown, field: string) => unknown>;

/** The stored shape and the declaration name the same fields (a field missing in either fails typecheck). */
type SameKeys<A, B> = [Exclude<A, B> | Exclude<B, A>] extends [never] ? true : never;
const _sameKeys: SameKeys<keyof EditableFields, AgentFieldName> = true;
void _sameKeys;

/**
 * Checks the submitted fields against docs/api/agents.md#editable-fields and returns them in stored
 * form (name trimmed), except knowledge files, which are stored once copied. Fields left out stay
 * out. Throws INVALID_ARGUMENT naming the first bad field.
 */
export function checkFields(input: FieldsInput): Partial<SubmittedFields> {
  const out: Partial<Record<keyof EditableFields, unknown>> = {};
  for (const key of EDITABLE_FIELDS) {
    const value = input[key];
    if (value === undefined) continue;
    out[key] = CHECK[key](value, key);
  }
  return out as Partial<SubmittedFields>;
}

/** The fields of a new Agent: the submitted ones over the defaults; `name` is required. */
export function fieldsForCreate(input: FieldsInput): SubmittedFields {
  const checked = checkFields(input);
  if (checked.name === undefined) fail('name', 'is required');
  return { ...DEFAULTS, ...checked } as SubmittedFields;
}

/** The editable fields of a stored configuration, and nothing else. */
export function editableOf(source: EditableFields): EditableFields {
  const out: Partial<Record<keyof EditableFields, unknown>> = {};
  for (const key of EDITABLE_FIELDS) out[key] = source[key];
  return out as EditableFields;
}
