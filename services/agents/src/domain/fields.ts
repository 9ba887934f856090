import { checkJsonValue, errors } from '@workspace/platform';
import { charCount, hasLoneSurrogate } from './text.js';

export const RESPONSE_MODES = ['low', 'medium', 'high'] as const;
export const THREAD_CREATION_MODES = ['explicit', 'automatic'] as const;
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

export const EDITABLE_FIELDS = [
  'name', 'description', 'goal', 'instructions', 'conversationStarters', 'responseMode', 'projectName',
  'threadManagementEnabled', 'threadCreationMode', 'knowledgeFiles', 'skills', 'connectors',
] as const satisfies readonly (keyof EditableFields)[];

export const DEFAULTS: Omit<EditableFields, 'name'> = {
  description: '',
  goal: '',
  instructions: '',
  conversationStarters: [],
  responseMode: 'high',
  projectName: 'Home',
  threadManagementEnabled: true,
  threadCreationMode: 'explicit',
  knowledgeFiles: [],
  skills: null,
  connectors: null,
};

export const LIMITS = {
  name: 100,
  description: 1_000,
  goal: 4_000,
  instructions: 64_000,
  conversationStarters: 10,
  conversationStarter: 500,
  projectName: 100,
  knowledgeFiles: 20,
  skills: 50,
  skill: 100,
  connectors: 20,
  connectorBytes: 8 * 1024,
  /**
   * Levels of objects and arrays in one connector, itself level 1. Connectors travel as
   * google.protobuf.Value, three messages a level, and decoders stop at 100 messages deep.
   */
  connectorDepth: 16,
} as const;

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
function knowledgeFile(value: unknown, field: string): KnowledgeRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(field, 'must be an object {path}');
  const extra = Object.keys(value).find((k) => k !== 'path');
  if (extra !== undefined) fail(`${field}.${extra}`, 'is not a known field');
  return { path: text((value as { path?: unknown }).path, `${field}.path`, 1, 900) };
}

function connector(value: unknown, field: string): Connector {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(field, 'must be an object');
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || type.length === 0) fail(`${field}.type`, 'must be a non-empty string');
  // Checked first, without recursion: what follows (JSON text, the digest) recurses.
  const problem = checkJsonValue(value, LIMITS.connectorDepth);
  if (problem === 'too-deep') fail(field, `must be nested at most ${LIMITS.connectorDepth} levels deep`);
  if (problem === 'not-finite') fail(field, 'must hold finite numbers only');
  const json = JSON.stringify(value);
  if (hasLoneSurrogate(json)) fail(field, 'must be valid Unicode');
  if (Buffer.byteLength(json, 'utf8') > LIMITS.connectorBytes) fail(field, `must be at most ${LIMITS.connectorBytes} bytes of JSON`);
  return value as Connector;
}

type Checkers = { [K in keyof SubmittedFields]: (value: unknown, field: K) => SubmittedFields[K] };

const CHECK: Checkers = {
  name: (v, f) => {
    const trimmed = typeof v === 'string' ? v.trim() : v;
    return text(trimmed, f, 1, LIMITS.name);
  },
  description: (v, f) => text(v, f, 0, LIMITS.description),
  goal: (v, f) => text(v, f, 0, LIMITS.goal),
  instructions: (v, f) => text(v, f, 0, LIMITS.instructions),
  conversationStarters: (v, f) =>
    list(v, f, LIMITS.conversationStarters).map((s, i) => text(s, `${f}[${i}]`, 1, LIMITS.conversationStarter)),
  responseMode: (v, f) => oneOf(v, f, RESPONSE_MODES),
  projectName: (v, f) => text(v, f, 1, LIMITS.projectName),
  threadManagementEnabled: (v, f) => (typeof v === 'boolean' ? v : fail(f, 'must be a boolean')),
  threadCreationMode: (v, f) => oneOf(v, f, THREAD_CREATION_MODES),
  knowledgeFiles: (v, f) => list(v, f, LIMITS.knowledgeFiles).map((k, i) => knowledgeFile(k, `${f}[${i}]`)),
  skills: (v, f) => (v === null ? null : list(v, f, LIMITS.skills).map((s, i) => text(s, `${f}[${i}]`, 1, LIMITS.skill))),
  connectors: (v, f) => (v === null ? null : list(v, f, LIMITS.connectors).map((c, i) => connector(c, `${f}[${i}]`))),
};

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
    out[key] = (CHECK[key] as (v: unknown, f: string) => unknown)(value, key);
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
