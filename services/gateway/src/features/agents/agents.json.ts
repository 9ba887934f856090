import type { Agent, AgentConfig, AgentFields, AgentListItem, Chat, KnowledgeFile } from '@workspace/proto/workspace/agents/v1/agents';
import type { z } from 'zod';
import { AGENT_FIELD_NAMES, agentFieldsToProto, type AgentFieldName } from '@workspace/platform';
import { CONFIG_MEMBER_ORDER, type CreateAgentBody, type UpdateAgentBody } from './agents.schemas.js';

type Fields = Omit<z.output<typeof UpdateAgentBody>, 'baseConfigId'> | z.output<typeof CreateAgentBody>;

/**
 * The submitted fields as the agents service takes them. Built by hand, not with
 * `fromPartial`, because that would turn an explicit `null` (skills, connectors) into "absent".
 */
export function fieldsToProto(body: Fields): AgentFields {
  return agentFieldsToProto(body, (k: { path: string }) => ({ path: k.path, size: undefined, sha256: undefined, mimeType: undefined }));
}

function knowledgeJson(k: KnowledgeFile) {
  return {
    path: k.path,
    ...(k.size !== undefined && { size: k.size }),
    ...(k.sha256 !== undefined && { sha256: k.sha256 }),
    ...(k.mimeType !== undefined && { mimeType: k.mimeType }),
  };
}

export function configJson(c: AgentConfig) {
  const json = {
    schemaVersion: c.schemaVersion,
    configId: c.configId,
    agentId: c.agentId,
    normalizedName: c.normalizedName,
    ...(Object.fromEntries(AGENT_FIELD_NAMES.map((k) => [k, c[k]])) as Pick<AgentConfig, AgentFieldName>),
    knowledgeFiles: c.knowledgeFiles.map(knowledgeJson),
    skills: (c.skills ?? null) as string[] | null,
    connectors: (c.connectors ?? null) as Record<string, unknown>[] | null,
    createdAt: c.createdAt,
    contentDigest: c.contentDigest,
    changeNote: c.changeNote,
    parentConfigId: c.parentConfigId ?? null,
  };
  // In the order of the AgentConfig message, as the response schema lists them.
  return Object.fromEntries(CONFIG_MEMBER_ORDER.map((k) => [k, json[k]])) as typeof json;
}

export function agentJson(a: Agent) {
  if (!a.config) throw new Error('agent without config');
  return {
    agentId: a.agentId,
    currentConfigId: a.currentConfigId,
    state: a.state,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    lastChatAt: a.lastChatAt ?? null,
    chatCount: a.chatCount,
    config: configJson(a.config),
  };
}

/** Exactly the seed's list item fields. */
export function listItemJson(a: AgentListItem) {
  return {
    agentId: a.agentId,
    currentConfigId: a.currentConfigId,
    name: a.name,
    description: a.description,
    projectName: a.projectName,
    responseMode: a.responseMode,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    lastChatAt: a.lastChatAt ?? null,
    chatCount: a.chatCount,
    activeScheduleCount: a.activeScheduleCount,
    nextRunAt: a.nextRunAt ?? null,
  };
}

export function chatJson(c: Chat) {
  return { chatId: c.chatId, agentId: c.agentId, configId: c.configId, projectName: c.projectName, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt, alias: c.alias ?? null };
}

/** A routing as JSON: null for a plain alias (docs/api/agents.md#rollout). */
export function routingJson(routing: readonly { configId: string; weight: number }[]): { configId: string; weight: number }[] | null {
  return routing.length === 0 ? null : routing.map((e) => ({ configId: e.configId, weight: e.weight }));
}
