import { requireUser, type AsyncService, type CallContext } from '@workspace/platform';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { listAgents } from '../domain/agent-list.js';
import type { Agents } from '../domain/agents.js';
import type { Chats } from '../domain/chats.js';
import type { AgentRepo, Scope } from '../domain/ports.js';
import type { versionsHandlers } from './versions.handlers.js';
import { agentToProto, chatToProto, configToProto, fieldsFromProto, listItemToProto } from './agents.mappers.js';

function scopeOf(ctx: CallContext): Scope {
  return { userId: requireUser(ctx), requestId: ctx.requestId, signal: ctx.signal };
}

export function agentsHandlers(deps: { agents: Agents; chats: Chats; repo: AgentRepo }): Omit<AsyncService<typeof AgentsServiceService>, keyof ReturnType<typeof versionsHandlers>> {
  const { agents, chats, repo } = deps;
  return {
    createAgent: async (req, ctx) => {
      const { agent, config } = await agents.create(scopeOf(ctx), fieldsFromProto(req.fields), { idempotencyKey: req.idempotencyKey, changeNote: req.changeNote });
      return agentToProto(agent, config);
    },
    getAgent: async (req, ctx) => {
      const { agent, config } = await agents.get(scopeOf(ctx), req.agentId);
      return agentToProto(agent, config);
    },
    updateAgent: async (req, ctx) => {
      const { agent, config } = await agents.update(scopeOf(ctx), req.agentId, req.baseConfigId, fieldsFromProto(req.fields), { changeNote: req.changeNote });
      return agentToProto(agent, config);
    },
    listAgents: async (req, ctx) => {
      // proto3 zero means "not given": the defaults apply.
      const out = await listAgents(repo, scopeOf(ctx), { page: req.page || undefined, limit: req.limit || undefined, q: req.q });
      return { agents: out.agents.map(listItemToProto), total: out.total, page: out.page, limit: out.limit, pages: out.pages };
    },
    listVersions: async (req, ctx) => ({ versions: (await agents.versions(scopeOf(ctx), req.agentId)).map(configToProto) }),
    deleteAgent: async (req, ctx) => {
      await agents.delete(scopeOf(ctx), req.agentId);
      return {};
    },
    createChat: async (req, ctx) => chatToProto(await chats.create(scopeOf(ctx), req.agentId, { title: req.title, idempotencyKey: req.idempotencyKey, alias: req.alias, routingKey: req.routingKey })),
    listChats: async (req, ctx) => ({ chats: (await chats.list(scopeOf(ctx), req.agentId)).map(chatToProto) }),
    getAgentUsage: async (_req, ctx) => agents.usage(scopeOf(ctx)),
    getChat: async (req, ctx) => {
      const { chat, config } = await chats.get(scopeOf(ctx), req.agentId, req.chatId);
      return { chat: chatToProto(chat), config: configToProto(config) };
    },
  };
}
