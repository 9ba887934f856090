import type { ServiceClient } from '@workspace/platform';
import type { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import type { WorkspaceFiles } from '../domain/ports.js';

/** WorkspaceFiles through the files service. */
export class GrpcWorkspaceFiles implements WorkspaceFiles {
  readonly #client: ServiceClient<typeof FilesServiceService>;

  constructor(client: ServiceClient<typeof FilesServiceService>) {
    this.#client = client;
  }

  async writeText(userId: string, path: string, content: string): Promise<void> {
    await this.#client.writeFile({ path, content: Buffer.from(content, 'utf8'), overwrite: true }, { userId });
  }
}
