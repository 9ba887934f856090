import { AppError, isAppError, type ServiceClient } from '@workspace/platform';
import type { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import type { KnowledgeFile } from '../domain/fields.js';
import type { KnowledgeStore, Scope, StagedKnowledge } from '../domain/ports.js';

export type FilesClient = ServiceClient<typeof FilesServiceService>;

/** Errors the files service reports about one of the paths, with its index in details. */
const PATH_ERRORS = new Set(['INVALID_PATH', 'FILE_NOT_FOUND', 'IS_A_DIRECTORY']);

/** Knowledge copies through the files service, on behalf of the calling user. */
export class GrpcKnowledgeStore implements KnowledgeStore {
  readonly #client: FilesClient;
  readonly #deadlineMs: number;

  /** `deadlineMs`: pinning reads every byte of the files to hash them, so it gets longer than a lookup. */
  constructor(client: FilesClient, options: { deadlineMs: number }) {
    this.#client = client;
    this.#deadlineMs = options.deadlineMs;
  }

  async pin(scope: Scope, agentId: string, paths: string[]): Promise<KnowledgeFile[]> {
    try {
      const { files } = await this.#client.pinKnowledge({ agentId, paths }, { userId: scope.userId, requestId: scope.requestId, signal: scope.signal, deadlineMs: this.#deadlineMs });
      return files.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256, mimeType: f.mimeType }));
    } catch (err) {
      throw asFieldError(err);
    }
  }

  async pinStaged(scope: Scope, agentId: string, files: StagedKnowledge[]): Promise<void> {
    await this.#client.pinStagedKnowledge({ agentId, files }, { userId: scope.userId, requestId: scope.requestId, signal: scope.signal, deadlineMs: this.#deadlineMs });
  }

  async unpinAll(scope: Scope, agentId: string): Promise<void> {
    // Without the caller's signal: a clean-up must not stop because the client left.
    await this.#client.unpinKnowledge({ agentId }, { userId: scope.userId, requestId: scope.requestId, deadlineMs: this.#deadlineMs });
  }
}

/** The files service names a path by its index; the caller knows it as `knowledgeFiles[i].path`. */
function asFieldError(err: unknown): unknown {
  if (!isAppError(err) || !PATH_ERRORS.has(err.code) || err.details?.index === undefined) return err;
  const { index, ...details } = err.details;
  return new AppError(err.code, err.message, { details: { ...details, field: `knowledgeFiles[${index}].path` }, cause: err });
}
