import { errors, type ServiceClient } from '@workspace/platform';
import type { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import type { ProjectDirectory, Scope } from '../domain/ports.js';

export type ProjectsClient = ServiceClient<typeof ProjectsServiceService>;

/** Project lookups through the projects service, on behalf of the calling user. */
export class GrpcProjectDirectory implements ProjectDirectory {
  readonly #client: ProjectsClient;

  constructor(client: ProjectsClient) {
    this.#client = client;
  }

  async resolve(scope: Scope, name: string): Promise<string> {
    // GetProject compares names case-insensitively and answers PROJECT_NOT_FOUND itself.
    const project = await this.#client.getProject({ name }, { userId: scope.userId, requestId: scope.requestId, signal: scope.signal });
    if (project.archived) throw errors.projectArchived(project.name);
    return project.name;
  }
}
