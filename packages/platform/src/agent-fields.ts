import type { AgentFields as AgentFieldsProto } from '@workspace/proto/workspace/agents/v1/agents';

/**
 * The editable fields of an Agent configuration (docs/api/agents.md#editable-fields), declared
 * once: their order, kinds, limits, defaults and API descriptions. The gateway's request and
 * response schemas, the JSON ↔ proto mapping on both sides, and the agents service's checks,
 * defaults, contentDigest input and diffs are derived from this table. The proto cannot be
 * derived: the `satisfies` below makes this table and the AgentFields message agree key for key
 * (a field missing on either side fails typecheck), and unit tests compare both with the
 * AgentConfig message.
 *
 * Order matters: it is the order of the request schemas (and so of the OpenAPI document) and of
 * the editable fields given to diffs. The digest is of canonical JSON, so order never reaches it.
 */

export const RESPONSE_MODES = ['low', 'medium', 'high'] as const;
export const THREAD_CREATION_MODES = ['explicit', 'automatic'] as const;

/** A string of `min`–`max` code points; `trim`: counted, and stored, trimmed. */
export interface TextField {
  readonly kind: 'text';
  readonly min: number;
  readonly max: number;
  readonly trim?: true;
  readonly default: string | undefined;
  readonly doc: string;
}

export interface EnumField {
  readonly kind: 'enum';
  readonly values: readonly [string, ...string[]];
  readonly default: string;
  readonly doc: string;
}

export interface BooleanField {
  readonly kind: 'boolean';
  readonly default: boolean;
  readonly doc: string;
}

/**
 * At most `maxItems` strings of `min`–`max` code points. Not nullable: it travels as a StringList;
 * nullable: as a google.protobuf.Value, so that "absent" and "null" stay distinct.
 */
export interface TextListField {
  readonly kind: 'textList';
  readonly maxItems: number;
  readonly min: number;
  readonly max: number;
  readonly nullable: boolean;
  readonly default: readonly string[] | null;
  readonly doc: string;
}

/** At most `maxItems` knowledge files, submitted as `{path}` (docs/api/agents.md#knowledge). */
export interface KnowledgeListField {
  readonly kind: 'knowledgeList';
  readonly maxItems: number;
  readonly pathMax: number;
  readonly default: readonly [];
  readonly doc: string;
}

/** Null or at most `maxItems` JSON objects with a string `type`, each bounded in bytes and depth. */
export interface ConnectorListField {
  readonly kind: 'connectorList';
  readonly maxItems: number;
  readonly maxBytes: number;
  /**
   * Levels of objects and arrays in one connector, itself level 1. Connectors travel as
   * google.protobuf.Value, three messages a level, and decoders stop at 100 messages deep.
   */
  readonly maxDepth: number;
  readonly default: null;
  readonly doc: string;
}

export type AgentFieldSpec = TextField | EnumField | BooleanField | TextListField | KnowledgeListField | ConnectorListField;

/** How a field travels in the AgentFields message. */
export type AgentFieldWire = 'scalar' | 'stringList' | 'knowledgeList' | 'value';

export const AGENT_FIELDS = {
  name: { kind: 'text', min: 1, max: 100, trim: true, default: undefined, doc: '1–100 characters; stored trimmed' },
  description: { kind: 'text', min: 0, max: 1_000, default: '', doc: 'default ""' },
  goal: { kind: 'text', min: 0, max: 4_000, default: '', doc: 'default ""' },
  instructions: { kind: 'text', min: 0, max: 64_000, default: '', doc: 'default ""' },
  conversationStarters: { kind: 'textList', maxItems: 10, min: 1, max: 500, nullable: false, default: [], doc: 'default []; at most 10, each 1–500 characters' },
  responseMode: { kind: 'enum', values: RESPONSE_MODES, default: 'high', doc: 'default "high"' },
  projectName: { kind: 'text', min: 1, max: 100, default: 'Home', doc: 'default "Home"; an existing, unarchived project, matched case-insensitively; the stored spelling is kept' },
  threadManagementEnabled: { kind: 'boolean', default: true, doc: 'default true' },
  threadCreationMode: { kind: 'enum', values: THREAD_CREATION_MODES, default: 'explicit', doc: 'default "explicit"' },
  knowledgeFiles: { kind: 'knowledgeList', maxItems: 20, pathMax: 900, default: [], doc: 'default []; at most 20 `{path}` objects' },
  skills: { kind: 'textList', maxItems: 50, min: 1, max: 100, nullable: true, default: null, doc: 'default null; null or at most 50 strings of 1–100 characters' },
  connectors: { kind: 'connectorList', maxItems: 20, maxBytes: 8 * 1024, maxDepth: 16, default: null, doc: 'default null; null or at most 20 connector objects' },
} as const satisfies { readonly [K in keyof Required<AgentFieldsProto>]: AgentFieldSpec };

export type AgentFieldName = keyof typeof AGENT_FIELDS;

/** The editable fields in declaration order. */
export const AGENT_FIELD_NAMES = Object.keys(AGENT_FIELDS) as AgentFieldName[];

/** How a field travels in the AgentFields message (whose optional wrappers keep "absent" distinct). */
export function agentFieldWire(spec: AgentFieldSpec): AgentFieldWire {
  switch (spec.kind) {
    case 'text':
    case 'enum':
    case 'boolean':
      return 'scalar';
    case 'textList':
      return spec.nullable ? 'value' : 'stringList';
    case 'knowledgeList':
      return 'knowledgeList';
    case 'connectorList':
      return 'value';
  }
}

/**
 * An AgentFields message from JSON-shaped fields (absent stay absent; an explicit null stays null).
 * `knowledge` maps one knowledge file: each side sends different members of it.
 */
export function agentFieldsToProto<K>(
  body: { readonly [F in AgentFieldName]?: unknown },
  knowledge: (file: K) => NonNullable<AgentFieldsProto['knowledgeFiles']>['files'][number],
): AgentFieldsProto {
  const out: Record<string, unknown> = {};
  for (const name of AGENT_FIELD_NAMES) {
    const value = body[name];
    switch (agentFieldWire(AGENT_FIELDS[name])) {
      case 'stringList':
        out[name] = value === undefined ? undefined : { values: value };
        break;
      case 'knowledgeList':
        out[name] = value === undefined ? undefined : { files: (value as K[]).map(knowledge) };
        break;
      default:
        out[name] = value;
    }
  }
  return out as unknown as AgentFieldsProto;
}

/**
 * JSON-shaped fields from an AgentFields message: absent ones stay undefined, the wrappers are
 * unwrapped; `knowledge` maps one knowledge file.
 */
export function agentFieldsFromProto<K>(
  fields: AgentFieldsProto,
  knowledge: (file: NonNullable<AgentFieldsProto['knowledgeFiles']>['files'][number]) => K,
): { [F in AgentFieldName]: unknown } {
  const out: Record<string, unknown> = {};
  for (const name of AGENT_FIELD_NAMES) {
    const value: unknown = fields[name];
    switch (agentFieldWire(AGENT_FIELDS[name])) {
      case 'stringList':
        out[name] = (value as { values: string[] } | undefined)?.values;
        break;
      case 'knowledgeList':
        out[name] = (value as NonNullable<AgentFieldsProto['knowledgeFiles']> | undefined)?.files.map(knowledge);
        break;
      default:
        out[name] = value;
    }
  }
  return out as { [F in AgentFieldName]: unknown };
}
