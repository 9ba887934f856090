import { defineService } from '@workspace/platform';
import { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import { RedisAgentRepo } from './adapters/agent-repo.redis.js';
import { RedisAliasRepo } from './adapters/alias-repo.redis.js';
import { GrpcKnowledgeStore } from './adapters/knowledge.grpc.js';
import { GrpcProjectDirectory } from './adapters/projects.grpc.js';
import { configSchema } from './config.js';
import { RedisAgentImport } from './adapters/agent-import.redis.js';
import { AgentExport } from './domain/agent-export.js';
import { AgentImport } from './domain/agent-import.js';
import { Agents } from './domain/agents.js';
import { Aliases } from './domain/aliases.js';
import { Chats } from './domain/chats.js';
import type { KnowledgeStore, ProjectDirectory } from './domain/ports.js';
import { Versions } from './domain/versions.js';
import { agentsHandlers } from './grpc/agents.handlers.js';
import { versionsHandlers } from './grpc/versions.handlers.js';

/**
 * The agents service: Agents, their immutable configurations and chats in Redis (WATCH/MULTI
 * compare-and-set); events through the outbox. Readiness follows Redis only: while NATS is
 * down, writes still succeed and events wait in the outbox.
 */
export const agentsService = defineService({
  name: 'agents',
  config: configSchema,
  deps: {
    /** Project lookups. */
    projects: (ctx): ProjectDirectory =>
      new GrpcProjectDirectory(
        // A lookup is safe to repeat on another replica when the first one is going away.
        ctx.client(ProjectsServiceService, { serviceName: 'projects', address: ctx.config.PROJECTS_ADDR, idempotent: ['getProject'] }),
      ),
    /** Knowledge copies. */
    knowledge: (ctx): KnowledgeStore =>
      new GrpcKnowledgeStore(
        // Pinning is content-addressed: a repeat copies nothing new and answers the same.
        ctx.client(FilesServiceService, { serviceName: 'files', address: ctx.config.FILES_ADDR, idempotent: ['pinKnowledge', 'unpinKnowledge'] }),
        { deadlineMs: ctx.config.KNOWLEDGE_DEADLINE_MS },
      ),
  },
  build(ctx, { projects, knowledge }) {
    const { outbox, kick } = ctx.events;
    const repo = new RedisAgentRepo({ redis: ctx.redis, outbox, onEvents: kick, poolSize: ctx.config.REDIS_TX_CONNECTIONS });
    ctx.onStop('transaction connections', () => repo.close());
    const agents = new Agents({ repo, projects, knowledge, retention: ctx.config.CONFIG_RETENTION, maxAgents: ctx.config.MAX_AGENTS });
    const chats = new Chats({ repo, agents });
    const aliasRepo = new RedisAliasRepo(ctx.redis);
    const aliases = new Aliases({ repo: aliasRepo, agents, maxAliases: ctx.config.MAX_ALIASES_PER_AGENT });
    const versions = new Versions({ repo, aliases: aliasRepo, agents });
    const exporter = new AgentExport({ repo, aliases: aliasRepo, agents });
    const importer = new AgentImport({
      repo: new RedisAgentImport({ redis: ctx.redis, outbox, onEvents: kick }),
      projects,
      knowledge,
      maxAgents: ctx.config.MAX_AGENTS,
      maxAliases: ctx.config.MAX_ALIASES_PER_AGENT,
      maxConfigs: ctx.config.CONFIG_RETENTION,
    });
    ctx.serve(AgentsServiceService, { ...agentsHandlers({ agents, chats, repo }), ...versionsHandlers({ agents, versions, aliases, exporter, importer }) });
  },
});
