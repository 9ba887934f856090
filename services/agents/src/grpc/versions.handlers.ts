import { requireUser, type AsyncService, type CallContext } from '@workspace/platform';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import type { Agents } from '../domain/agents.js';
import type { Aliases } from '../domain/aliases.js';
import type { AgentExport } from '../domain/agent-export.js';
import type { AgentImport } from '../domain/agent-import.js';
import { importFromProto } from './import.mappers.js';
import type { Scope } from '../domain/ports.js';
import type { Versions } from '../domain/versions.js';
import { aliasToProto, historyToProto, statsToProto } from './aliases.mappers.js';
import { agentToProto, configToProto } from './agents.mappers.js';

type Handlers = AsyncService<typeof AgentsServiceService>;
type Keys = 'getVersion' | 'diffVersions' | 'putAlias' | 'getAlias' | 'listAliases' | 'getAliasHistory' | 'deleteAlias' | 'resolveAlias' | 'getAliasStats' | 'exportAgent' | 'importAgent';

function scopeOf(ctx: CallContext): Scope {
  return { userId: requireUser(ctx), requestId: ctx.requestId, signal: ctx.signal };
}

/** One version, diffs, aliases and the export document (docs/api/agents.md). */
export function versionsHandlers(deps: { agents: Agents; versions: Versions; aliases: Aliases; exporter: AgentExport; importer: AgentImport }): Pick<Handlers, Keys> {
  const { agents, versions, aliases, exporter, importer } = deps;
  return {
    getVersion: async (req, ctx) => configToProto(await versions.get(scopeOf(ctx), req.agentId, req.configId)),
    diffVersions: async (req, ctx) => {
      const out = await versions.diff(scopeOf(ctx), req.agentId, req.configId, req.from);
      return { from: out.from, to: out.to, operationsJson: JSON.stringify(out.operations) };
    },
    putAlias: async (req, ctx) => {
      const out = await aliases.put(scopeOf(ctx), req.agentId, req.alias, { configId: req.configId, routing: req.routing, description: req.description, ifMatch: req.ifMatch });
      return { alias: aliasToProto(out.alias), created: out.created };
    },
    getAlias: async (req, ctx) => {
      const out = await aliases.resolve(scopeOf(ctx), req.agentId, req.alias);
      return { alias: aliasToProto(out.alias), config: configToProto(out.config) };
    },
    listAliases: async (req, ctx) => ({ aliases: (await aliases.list(scopeOf(ctx), req.agentId)).map(aliasToProto) }),
    getAliasHistory: async (req, ctx) => ({ history: (await aliases.history(scopeOf(ctx), req.agentId, req.alias)).map(historyToProto) }),
    deleteAlias: async (req, ctx) => {
      await aliases.delete(scopeOf(ctx), req.agentId, req.alias);
      return {};
    },
    getAliasStats: async (req, ctx) => statsToProto(await aliases.stats(scopeOf(ctx), req.agentId, req.alias)),
    resolveAlias: async (req, ctx) => configToProto((await aliases.resolve(scopeOf(ctx), req.agentId, req.alias)).config),
    exportAgent: async (req, ctx) => {
      const out = await exporter.export(scopeOf(ctx), req.agentId);
      return { agent: agentToProto(out.agent, out.current), configs: out.configs.map(configToProto), aliases: out.aliases.map(aliasToProto) };
    },
    importAgent: async (req, ctx) => {
      const scope = scopeOf(ctx);
      const { agentId } = await importer.import(scope, importFromProto(req));
      const { agent, config } = await agents.get(scope, agentId);
      return agentToProto(agent, config);
    },
  };
}
