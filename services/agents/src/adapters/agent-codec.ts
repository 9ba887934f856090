import type { ResponseMode } from '../domain/fields.js';
import type { AgentRecord, AgentSummary } from '../domain/ports.js';

/** The summary as hash fields (they change together with currentConfigId). */
export function encodeSummary(s: AgentSummary): Record<string, string> {
  return {
    name: s.name,
    description: s.description,
    projectName: s.projectName,
    responseMode: s.responseMode,
    searchName: s.searchName,
    searchDescription: s.searchDescription,
  };
}

/** An Agent record as the fields of its hash; `lastChatAt` null is stored as "". */
export function encodeAgent(agent: AgentRecord): Record<string, string> {
  return {
    agentId: agent.agentId,
    currentConfigId: agent.currentConfigId,
    state: agent.state,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    lastChatAt: agent.lastChatAt ?? '',
    chatCount: String(agent.chatCount),
    ...encodeSummary(agent.summary),
  };
}

/** The record in a hash, or undefined for an empty (absent) hash. */
export function decodeAgent(hash: Record<string, string>): AgentRecord | undefined {
  if (!hash.agentId || !hash.currentConfigId) return undefined;
  return {
    agentId: hash.agentId,
    currentConfigId: hash.currentConfigId,
    state: 'active',
    createdAt: hash.createdAt ?? '',
    updatedAt: hash.updatedAt ?? '',
    lastChatAt: hash.lastChatAt ? hash.lastChatAt : null,
    chatCount: Number(hash.chatCount ?? 0),
    summary: {
      name: hash.name ?? '',
      description: hash.description ?? '',
      projectName: hash.projectName ?? '',
      responseMode: (hash.responseMode ?? 'high') as ResponseMode,
      searchName: hash.searchName ?? '',
      searchDescription: hash.searchDescription ?? '',
    },
  };
}
