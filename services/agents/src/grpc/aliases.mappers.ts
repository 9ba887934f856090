import type { Alias, AliasHistoryEntry as AliasHistoryEntryProto } from '@workspace/proto/workspace/agents/v1/agents';
import type { AliasHistoryEntry, AliasRecord } from '../domain/alias-ports.js';

export function aliasToProto(a: AliasRecord): Alias {
  return { alias: a.alias, agentId: a.agentId, configId: a.configId, description: a.description, createdAt: a.createdAt, updatedAt: a.updatedAt };
}

export function historyToProto(h: AliasHistoryEntry): AliasHistoryEntryProto {
  return { configId: h.configId, from: h.from, until: h.until ?? undefined };
}
