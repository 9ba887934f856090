import type {
  Agent,
  AgentConfig as AgentConfigProto,
  AgentFields,
  AgentListItem,
  Chat,
  KnowledgeFile as KnowledgeFileProto,
} from '@workspace/proto/workspace/agents/v1/agents';
import { agentFieldsFromProto } from '@workspace/platform';
import { editableOf, type FieldsInput, type KnowledgeFile } from '../domain/fields.js';
import type { AgentConfig, AgentRecord, ChatRecord } from '../domain/ports.js';

/** Only the members that were sent, so that validation sees exactly what the caller gave. */
function knowledgeInput(file: KnowledgeFileProto): Record<string, unknown> {
  const out: Record<string, unknown> = { path: file.path };
  if (file.size !== undefined) out.size = file.size;
  if (file.sha256 !== undefined) out.sha256 = file.sha256;
  if (file.mimeType !== undefined) out.mimeType = file.mimeType;
  return out;
}

/** The submitted fields of a request; absent ones stay undefined. */
export function fieldsFromProto(fields: AgentFields | undefined): FieldsInput {
  if (!fields) return {};
  return agentFieldsFromProto(fields, knowledgeInput);
}

function knowledgeToProto(file: KnowledgeFile): KnowledgeFileProto {
  return { path: file.path, size: file.size, sha256: file.sha256, mimeType: file.mimeType };
}

export function configToProto(c: AgentConfig): AgentConfigProto {
  return {
    schemaVersion: c.schemaVersion,
    configId: c.configId,
    agentId: c.agentId,
    normalizedName: c.normalizedName,
    ...editableOf(c),
    knowledgeFiles: c.knowledgeFiles.map(knowledgeToProto),
    createdAt: c.createdAt,
    contentDigest: c.contentDigest,
    // Configs written before change notes existed have neither field.
    changeNote: c.changeNote ?? '',
    parentConfigId: c.parentConfigId ?? undefined,
  };
}

export function agentToProto(agent: AgentRecord, config: AgentConfig): Agent {
  return {
    agentId: agent.agentId,
    currentConfigId: agent.currentConfigId,
    state: agent.state,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    lastChatAt: agent.lastChatAt ?? undefined,
    chatCount: agent.chatCount,
    config: configToProto(config),
  };
}

/** Schedules come with a later service: until then no Agent has an active one. */
export function listItemToProto(agent: AgentRecord): AgentListItem {
  return {
    agentId: agent.agentId,
    currentConfigId: agent.currentConfigId,
    name: agent.summary.name,
    description: agent.summary.description,
    projectName: agent.summary.projectName,
    responseMode: agent.summary.responseMode,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    lastChatAt: agent.lastChatAt ?? undefined,
    chatCount: agent.chatCount,
    activeScheduleCount: 0,
    nextRunAt: undefined,
  };
}

export function chatToProto(chat: ChatRecord): Chat {
  return { ...chat, alias: chat.alias ?? undefined };
}
