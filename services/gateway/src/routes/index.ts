import type { ServiceClient } from '@workspace/platform';
import type { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { agentsRoutes } from './agents.routes.js';
import { automationsRoutes, type AutomationsClient } from './automations.routes.js';
import type { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { filesRoutes } from './files.routes.js';
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

/** Every route of the API, in the order they are matched. */
export function buildRoutes(clients: Clients): RouteDef[] {
  return [...projectsRoutes(clients.projects), ...agentsRoutes(clients.agents, clients.automations), ...filesRoutes(clients.files, clients.projects), ...(clients.automations ? automationsRoutes(clients.automations) : [])];
}
