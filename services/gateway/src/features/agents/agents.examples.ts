import { AGENT_ID, CHAT_ID, CONFIG_ID, CREATED_AT, NEXT_CONFIG_ID, SHA256, UPDATED_AT } from '../../api/ids.examples.js';

/** Examples of the Agent routes (docs/api/agents.md). */

export const createAgentBody = {
  name: 'Support triage',
  description: 'Sorts incoming tickets',
  instructions: 'Label each ticket with one of: bug, question, feature.',
  conversationStarters: ['Triage my inbox'],
  responseMode: 'medium' as const,
  knowledgeFiles: [{ path: '/files/notes.md' }],
};

export const updateAgentBody = { baseConfigId: CONFIG_ID, instructions: 'Label each ticket and say why.' };

const config = {
  schemaVersion: 1,
  configId: CONFIG_ID,
  agentId: AGENT_ID,
  name: 'Support triage',
  normalizedName: 'support triage',
  description: 'Sorts incoming tickets',
  goal: '',
  instructions: 'Label each ticket with one of: bug, question, feature.',
  conversationStarters: ['Triage my inbox'],
  responseMode: 'medium',
  threadManagementEnabled: true,
  threadCreationMode: 'explicit',
  projectName: 'Home',
  knowledgeFiles: [{ path: '/files/notes.md', size: 5, sha256: SHA256, mimeType: 'text/markdown' }],
  skills: null,
  connectors: null,
  createdAt: CREATED_AT,
  changeNote: 'first version',
  parentConfigId: null as string | null,
  contentDigest: '8d4f2a6c0e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f',
};

const updatedConfig = { ...config, configId: NEXT_CONFIG_ID, instructions: updateAgentBody.instructions, createdAt: UPDATED_AT, changeNote: 'explain each label', parentConfigId: CONFIG_ID, contentDigest: '1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f8d4f2a6c0e1b3d5f7a9c' };

export const agent = { agentId: AGENT_ID, currentConfigId: CONFIG_ID, state: 'active', createdAt: CREATED_AT, updatedAt: CREATED_AT, lastChatAt: null, chatCount: 0, config };

export const updatedAgent = { ...agent, currentConfigId: NEXT_CONFIG_ID, updatedAt: UPDATED_AT, config: updatedConfig };

export const agentList = {
  agents: [
    {
      agentId: AGENT_ID,
      currentConfigId: CONFIG_ID,
      name: config.name,
      description: config.description,
      projectName: 'Home',
      responseMode: 'medium',
      createdAt: CREATED_AT,
      updatedAt: CREATED_AT,
      lastChatAt: null,
      chatCount: 0,
      activeScheduleCount: 1,
      nextRunAt: '2024-05-01T12:15:00.000Z',
    },
  ],
  pagination: { page: 1, limit: 20, total: 1, pages: 1 },
};

export const versions = { versions: [updatedConfig, config] };

export const chat = { chatId: CHAT_ID, agentId: AGENT_ID, configId: CONFIG_ID, projectName: 'Home', title: 'Ticket backlog', alias: null as string | null, createdAt: UPDATED_AT, updatedAt: UPDATED_AT };

export const chatWithConfig = { ...chat, config };

export const agentParams = { agentId: AGENT_ID };

/** Versions, diffs, aliases, export and import (docs/api/agents.md). */
export const versionParams = { agentId: AGENT_ID, configId: NEXT_CONFIG_ID };
export const oneVersion = updatedConfig;
export const versionDiff = { from: CONFIG_ID, to: NEXT_CONFIG_ID, operations: [{ op: 'replace', path: '/instructions', value: updateAgentBody.instructions }] };
export const aliasParams = { agentId: AGENT_ID, alias: 'production' };
export const putAliasBody = { configId: NEXT_CONFIG_ID, description: 'what customers talk to' };
export const alias = {
  alias: 'production', agentId: AGENT_ID, configId: NEXT_CONFIG_ID, routing: null as { configId: string; weight: number }[] | null,
  description: 'what customers talk to', createdAt: CREATED_AT, updatedAt: UPDATED_AT,
};
export const aliasWithConfig = { ...alias, config: updatedConfig };
export const aliasHistory = {
  history: [
    { configId: NEXT_CONFIG_ID, routing: [{ configId: NEXT_CONFIG_ID, weight: 90 }, { configId: CONFIG_ID, weight: 10 }], from: UPDATED_AT, until: null },
    { configId: CONFIG_ID, routing: null, from: CREATED_AT, until: UPDATED_AT },
  ],
};
export const aliasStats = {
  alias: 'production',
  since: UPDATED_AT,
  configs: [
    { configId: NEXT_CONFIG_ID, weight: 90, chats: 181 },
    { configId: CONFIG_ID, weight: 10, chats: 19 },
  ],
};
export const importForm = { projectName: 'Home', file: 'PK…' };
export const chatParams = { agentId: AGENT_ID, chatId: CHAT_ID };
