import type { Clients } from '../clients.js';
import { aliasRoutes } from '../features/agents/agent-aliases.routes.js';
import { agentTransferRoutes } from '../features/agents/transfer/agent-transfer.routes.js';
import { versionRoutes } from '../features/agents/agent-versions.routes.js';
import { agentsRoutes } from '../features/agents/agents.routes.js';
import { automationsRoutes } from '../features/automations/automations.routes.js';
import { filesRoutes, type FilesRouteDeps } from '../features/files/files.routes.js';
import { linksRoutes, type LinkOptions } from '../features/links/links.routes.js';
import { LinkSigner } from '../features/links/link-signer.js';
import { tusRoutes, type TusOptions } from '../features/files/tus/tus.routes.js';
import { projectsRoutes } from '../features/projects/projects.routes.js';
import { webhooksRoutes } from '../features/webhooks/webhooks.routes.js';
import type { RouteDef } from './route.js';

import { usageRoutes } from '../features/usage/usage.routes.js';
import { mcpRouteDocs } from '../features/mcp/mcp.openapi.js';

/** What routes need besides the clients: the file routes' byte path and its settings. */
export type RouteOptions = Omit<FilesRouteDeps, 'files' | 'projects'> & {
  links?: LinkOptions | undefined;
  /** Resumable uploads (tus): their Redis and settings; absent: not served. */
  tus?: Pick<TusOptions, 'redis' | 'expiryMs' | 'maxBytes'> | undefined;
};

/** Every route of the API, in the order they are matched. */
export function buildRoutes(clients: Clients, options: RouteOptions): RouteDef[] {
  return [
    ...projectsRoutes(clients.projects),
    ...agentsRoutes(clients.agents, clients.automations),
    ...versionRoutes(clients.agents),
    ...aliasRoutes(clients.agents),
    ...agentTransferRoutes({ agents: clients.agents, files: clients.files, store: options.store, logger: options.logger, uploadIdleTimeoutMs: options.uploadIdleTimeoutMs }),
    ...filesRoutes({ ...options, files: clients.files, projects: clients.projects }),
    ...linksRoutes({ files: clients.files, store: options.store, links: options.links ?? { signer: LinkSigner.ephemeral() } }),
    ...(options.tus ? tusRoutes({ ...options.tus, files: clients.files, store: options.store, logger: options.logger, idleTimeoutMs: options.uploadIdleTimeoutMs, publicUrl: options.links?.publicUrl }) : []),
    ...(clients.automations ? automationsRoutes(clients.automations) : []),
    ...usageRoutes(clients),
    ...(clients.webhooks ? webhooksRoutes(clients.webhooks) : []),
    ...mcpRouteDocs(),
  ];
}
