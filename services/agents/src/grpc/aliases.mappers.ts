import type { Alias, AliasHistoryEntry as AliasHistoryEntryProto, AliasStats as AliasStatsProto } from '@workspace/proto/workspace/agents/v1/agents';
import type { AliasHistoryEntry, AliasRecord, AliasStats } from '../domain/alias-ports.js';

export function aliasToProto(a: AliasRecord): Alias {
  return { alias: a.alias, agentId: a.agentId, configId: a.configId, description: a.description, createdAt: a.createdAt, updatedAt: a.updatedAt, routing: a.routing ?? [] };
}

export function historyToProto(h: AliasHistoryEntry): AliasHistoryEntryProto {
  return { configId: h.configId, from: h.from, until: h.until ?? undefined, routing: h.routing ?? [] };
}

export function statsToProto(s: AliasStats): AliasStatsProto {
  return { alias: s.alias, since: s.since, configs: s.configs };
}
