import { AGENT_FIELD_NAMES, AGENT_FIELDS, checkJsonValue, type AgentFieldName, type AgentFieldSpec } from '@workspace/platform';
import { AgentConfig as AgentConfigMessage } from '@workspace/proto/workspace/agents/v1/agents';
import { z } from 'zod';
import { hasLoneSurrogate, integerQuery, timestamp, wellFormed } from '../../api/schemas.js';

/** Lengths count Unicode code points (an emoji is one character), as the agents service does. */
const codePoints = (s: string) => [...s].length;

/** A string of `min`–`max` characters, valid Unicode (a lone surrogate cannot travel as UTF-8). */
function chars(min: number, max: number, options: { trim?: boolean } = {}) {
  return z
    .string()
    .superRefine((value, ctx) => {
      if (/\p{Cs}/u.test(value)) ctx.addIssue({ code: 'custom', message: 'must be valid Unicode (no lone surrogates)' });
      const n = codePoints(options.trim ? value.trim() : value);
      if (n < min || n > max) ctx.addIssue({ code: 'custom', message: min > 0 ? `must be ${min}–${max} characters` : `must be at most ${max} characters` });
    })
    .meta({ minLength: min, maxLength: max });
}

const { knowledgeFiles: KNOWLEDGE, connectors: CONNECTORS } = AGENT_FIELDS;

/** Knowledge files of one configuration, at most (as submitted, and as an archive holds them stored). */
export const MAX_KNOWLEDGE_FILES = KNOWLEDGE.maxItems;

const KnowledgeFileInput = z
  .object({ path: wellFormed(z.string().min(1).max(KNOWLEDGE.pathMax)).describe('an existing workspace file, e.g. /files/notes.md; its bytes are copied for the Agent when the config is written') })
  .strict();

const Connector = z
  .looseObject({ type: z.string().min(1).describe('what the connector connects to') })
  .superRefine((value, ctx) => {
    // Depth first, without recursion: JSON.stringify recurses.
    if (checkJsonValue(value, CONNECTORS.maxDepth) === 'too-deep') {
      ctx.addIssue({ code: 'custom', message: `must be nested at most ${CONNECTORS.maxDepth} levels deep` });
    } else if (Buffer.byteLength(JSON.stringify(value), 'utf8') > CONNECTORS.maxBytes) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${CONNECTORS.maxBytes} bytes of JSON` });
    } else if (hasLoneSurrogate(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be valid Unicode (no lone surrogates)' });
    }
  })
  .describe(`any JSON object with a string \`type\`; at most ${CONNECTORS.maxBytes / 1024} KiB as JSON and ${CONNECTORS.maxDepth} levels of objects and arrays deep (the connector is level 1)`);

type InputOf<S> = S extends { kind: 'text' }
  ? string
  : S extends { kind: 'enum'; values: readonly (infer V)[] }
    ? V
    : S extends { kind: 'boolean' }
      ? boolean
      : S extends { kind: 'textList'; nullable: true }
        ? string[] | null
        : S extends { kind: 'textList' }
          ? string[]
          : S extends { kind: 'knowledgeList' }
            ? { path: string }[]
            : S extends { kind: 'connectorList' }
              ? ({ type: string } & Record<string, unknown>)[] | null
              : never;

/** The validated value of each editable field. */
type EditableInput = { [K in AgentFieldName]: InputOf<(typeof AGENT_FIELDS)[K]> };

/** The request schema of one editable field, from its declaration. */
function inputOf(spec: AgentFieldSpec): z.ZodType {
  switch (spec.kind) {
    case 'text':
      return chars(spec.min, spec.max, spec.trim ? { trim: true } : {});
    case 'enum':
      return z.enum(spec.values);
    case 'boolean':
      return z.boolean();
    case 'textList': {
      const list = z.array(chars(spec.min, spec.max)).max(spec.maxItems);
      return spec.nullable ? list.nullable() : list;
    }
    case 'knowledgeList':
      return z.array(KnowledgeFileInput).max(spec.maxItems);
    case 'connectorList':
      return z.array(Connector).max(spec.maxItems).nullable();
  }
}

/** The response schema of one editable field, as a stored configuration holds it. */
function outputOf(spec: AgentFieldSpec): z.ZodType {
  switch (spec.kind) {
    case 'text':
      return z.string();
    case 'enum':
      return z.enum(spec.values);
    case 'boolean':
      return z.boolean();
    case 'textList':
      return spec.nullable ? z.array(z.string()).nullable() : z.array(z.string());
    case 'knowledgeList':
      return z.array(KnowledgeFile);
    case 'connectorList':
      return z.array(z.looseObject({ type: z.string() })).nullable();
  }
}

/** The editable fields (docs/api/agents.md#editable-fields), every one optional; create adds `name` as required. */
const editable = Object.fromEntries(AGENT_FIELD_NAMES.map((k) => [k, inputOf(AGENT_FIELDS[k]).describe(AGENT_FIELDS[k].doc)])) as {
  [K in AgentFieldName]: z.ZodType<EditableInput[K]>;
};

const optionalEditable = Object.fromEntries(Object.entries(editable).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof typeof editable]: z.ZodOptional<(typeof editable)[K]>;
};

/** Not an editable field: outside contentDigest, and a PATCH that changes nothing ignores it (docs/api/agents.md#change-notes-and-lineage). */
const changeNote = chars(0, 1_000).optional().describe('why this configuration was made; default ""; at most 1,000 characters; not part of contentDigest');

export const CreateAgentBody = z
  .object({ ...optionalEditable, name: editable.name, changeNote })
  .strict()
  .meta({ id: 'CreateAgentRequest' });

export const UpdateAgentBody = z
  .object({
    baseConfigId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('the currentConfigId this edit is based on; required unless If-Match carries it'),
    ...optionalEditable,
    changeNote,
  })
  .strict()
  .meta({ id: 'UpdateAgentRequest' });

export const ChatIdParams = z.object({ agentId: z.string(), chatId: z.string().describe('`cht_` + 32 lowercase hex') }).strict();

export const ListAgentsQuery = z
  .object({
    page: integerQuery('page', 1, Number.MAX_SAFE_INTEGER).optional().describe('≥ 1, default 1; a page past the end is empty'),
    limit: integerQuery('limit', 1, 100).optional().describe('1–100, default 20'),
    q: chars(0, 200).optional().describe('keeps Agents whose name or description, normalized (NFKC, trimmed, white space collapsed, lower case), contains q normalized the same way'),
  })
  .strict();

export const KnowledgeFile = z
  .object({
    path: z.string().describe('the workspace file the bytes were copied from'),
    size: z.number().int().describe('bytes of the pinned copy'),
    sha256: z.string().describe('SHA-256 (hex) of the pinned copy; unchanged bytes keep it, so re-submitting unchanged files is no change'),
    mimeType: z.string(),
  })
  .meta({ id: 'KnowledgeFile', description: "A knowledge file as stored: a copy owned by the Agent, unaffected by later changes to the workspace file; removed with the Agent." });

/** The members of a stored configuration other than its editable fields. */
const configMembers = {
  schemaVersion: z.number().int(),
  configId: z.string(),
  agentId: z.string(),
  normalizedName: z.string().describe('NFKC, trimmed, inner white space collapsed, lower case'),
  createdAt: timestamp,
  contentDigest: z.string().describe('SHA-256 (hex) of the RFC 8785 JSON of schemaVersion and the editable fields'),
  changeNote: z.string().describe('why it was made ("" when none was given); not part of contentDigest'),
  parentConfigId: z.string().nullable().describe('the config it was made from (the base of the PATCH); null for the first'),
};

/** The members of a configuration in the order of the AgentConfig message (and of the JSON the gateway writes). */
export const CONFIG_MEMBER_ORDER = Object.keys(AgentConfigMessage.create()) as (keyof AgentConfigMessage)[];

const configShape: Record<string, z.ZodType> = { ...configMembers, ...Object.fromEntries(AGENT_FIELD_NAMES.map((k) => [k, outputOf(AGENT_FIELDS[k])])) };

export const AgentConfig = z
  .object(Object.fromEntries(CONFIG_MEMBER_ORDER.map((k) => [k, configShape[k]!])) as { [K in keyof typeof configMembers | AgentFieldName]: z.ZodType })
  .meta({ id: 'AgentConfig', description: 'An immutable configuration.' });

export const Agent = z
  .object({
    agentId: z.string(),
    currentConfigId: z.string(),
    state: z.enum(['active']),
    createdAt: timestamp,
    updatedAt: timestamp.describe('changes with each new config'),
    lastChatAt: timestamp.nullable(),
    chatCount: z.number().int(),
    config: AgentConfig.describe('the configuration named by currentConfigId'),
  })
  .meta({ id: 'Agent' });

export const AgentListItem = z
  .object({
    agentId: z.string(),
    currentConfigId: z.string(),
    name: z.string(),
    description: z.string(),
    projectName: z.string(),
    responseMode: z.enum(['low', 'medium', 'high']),
    createdAt: timestamp,
    updatedAt: timestamp,
    lastChatAt: timestamp.nullable(),
    chatCount: z.number().int(),
    activeScheduleCount: z.number().int(),
    nextRunAt: timestamp.nullable(),
  })
  .meta({ id: 'AgentListItem' });

export const AgentList = z
  .object({
    agents: z.array(AgentListItem).describe('createdAt newest first, then agentId descending'),
    pagination: z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), pages: z.number().int() }),
  })
  .meta({ id: 'AgentList' });

export const AgentVersions = z.object({ versions: z.array(AgentConfig).describe('newest first, at most 100') }).meta({ id: 'AgentVersions' });

export const CreateChatBody = z
  .object({
    title: chars(1, 200).optional().describe('default "New chat"; 1–200 characters'),
    alias: z.string().max(200).optional().describe('pin the chat to the config this alias names now (404 ALIAS_NOT_FOUND when there is none)'),
    routingKey: chars(1, 200)
      .optional()
      .describe('through a routed alias: the same key always gets the same config while the routing is unchanged (without one: drawn at random by weight); ignored by a plain alias or without an alias'),
  })
  .strict();

export const Chat = z
  .object({
    chatId: z.string(),
    agentId: z.string(),
    configId: z.string().describe('the config current when the chat started; it stays pinned'),
    projectName: z.string(),
    title: z.string(),
    createdAt: timestamp,
    updatedAt: timestamp,
    alias: z.string().nullable().describe('the alias the chat was started through, or null'),
  })
  .meta({ id: 'Chat' });

export const ChatList = z.object({ chats: z.array(Chat).describe('newest first') }).meta({ id: 'ChatList' });

export const ChatWithConfig = Chat.extend({ config: AgentConfig.describe('the pinned configuration') }).meta({ id: 'ChatWithConfig' });
