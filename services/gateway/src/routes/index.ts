import type { ServiceClient } from '@workspace/platform';
import type { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { agentsRoutes } from './agents.routes.js';
import { automationsRoutes, type AutomationsClient } from './automations.routes.js';
import type { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { filesRoutes, type FilesRouteDeps } from './files.routes.js';
import { linksRoutes, type LinkOptions } from './links.routes.js';
import { LinkSigner } from '../links/link-signer.js';
import { tusRoutes, type TusOptions } from '../tus/tus.routes.js';
import { projectsRoutes } from './projects.routes.js';
import type { RouteDef } from './route.js';

/** One gRPC client per downstream service. */
export interface Clients {
  projects: ServiceClient<typeof ProjectsServiceService>;
  agents: ServiceClient<typeof AgentsServiceService>;
  files: ServiceClient<typeof FilesServiceService>;
  /** Schedules and webhook triggers; without it their routes are absent and the list shows no schedules. */
  automations?: AutomationsClient;
}

/** What routes need besides the clients: the file routes' byte path and its settings. */
export type RouteOptions = Omit<FilesRouteDeps, 'files' | 'projects'> & {
  links?: LinkOptions | undefined;
  /** Resumable uploads (tus): their Redis and settings; absent: not served. */
  tus?: Pick<TusOptions, 'redis' | 'expiryMs' | 'corsOrigins'> | undefined;
};

/** Every route of the API, in the order they are matched. */
export function buildRoutes(clients: Clients, options: RouteOptions): RouteDef[] {
  return [
    ...projectsRoutes(clients.projects),
    ...agentsRoutes(clients.agents, clients.automations),
    ...filesRoutes({ ...options, files: clients.files, projects: clients.projects }),
    ...linksRoutes({ files: clients.files, store: options.store, links: options.links ?? { signer: LinkSigner.ephemeral() } }),
    ...(options.tus ? tusRoutes({ ...options.tus, files: clients.files, store: options.store, logger: options.logger, publicUrl: options.links?.publicUrl }) : []),
    ...(clients.automations ? automationsRoutes(clients.automations) : []),
  ];
}
