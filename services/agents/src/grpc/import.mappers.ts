import type { AgentConfig, ImportAgentRequest } from '@workspace/proto/workspace/agents/v1/agents';
import type { ImportedConfig, ImportInput } from '../domain/agent-import.js';

function importedConfig(c: AgentConfig): ImportedConfig {
  return {
    configId: c.configId,
    parentConfigId: c.parentConfigId ?? null,
    changeNote: c.changeNote,
    createdAt: c.createdAt,
    fields: {
      name: c.name,
      description: c.description,
      goal: c.goal,
      instructions: c.instructions,
      conversationStarters: c.conversationStarters,
      responseMode: c.responseMode,
      projectName: c.projectName,
      threadManagementEnabled: c.threadManagementEnabled,
      threadCreationMode: c.threadCreationMode,
      knowledgeFiles: c.knowledgeFiles.map((k) => ({ path: k.path, size: k.size, sha256: k.sha256, mimeType: k.mimeType })),
      skills: c.skills ?? null,
      connectors: c.connectors ?? null,
    },
  };
}

export function importFromProto(req: ImportAgentRequest): ImportInput {
  return {
    configs: req.configs.map(importedConfig),
    aliases: req.aliases.map((a) => ({ alias: a.alias, configId: a.configId, description: a.description, routing: a.routing.length > 0 ? a.routing : null })),
    projectName: req.projectName,
    idempotencyKey: req.idempotencyKey,
    knowledge: req.knowledge.map((k) => ({ uploadId: k.uploadId, sha256: k.sha256, size: Number(k.size) })),
  };
}
