import { randomUUID } from 'node:crypto';
import { tenantKey, userTag } from '@workspace/platform';
import { ROOT, type WorkspacePath } from './paths.js';

/**
 * Where one user's files live in the bucket. Every key of a user starts with a fixed-length
 * hash of the user id, so no path, however crafted, reaches another user's keys:
 *
 *   ws/<tenant>/<segments joined by "/">   the file at /files/<segments>
 *   tmp/<tenant>/<uuid>                    an upload in progress (invisible to listings)
 *   kn/<tenant>/<agentId>/<sha256>         an Agent's knowledge copy, addressed by its content
 *                                          (outside ws/, so never listed, exported or deleted
 *                                          with the workspace file it was copied from)
 *
 * Directories are not stored: a directory exists while some key lies below it.
 */
export class TenantLayout {
  readonly root: string;
  readonly #tmp: string;
  readonly #knowledge: string;
  /** Name of the lock that serializes this user's commits (a Redis hash tag keeps it in the user's slot). */
  readonly commitLock: string;

  constructor(userId: string) {
    const tenant = tenantKey(userId);
    this.root = `ws/${tenant}/`;
    this.#tmp = `tmp/${tenant}/`;
    this.#knowledge = `kn/${tenant}/`;
    this.commitLock = `${userTag(userId)}:files:commit`;
  }

  /** The key of the file at `path` (never the root). */
  fileKey(path: WorkspacePath | readonly string[]): string {
    const segments = Array.isArray(path) ? path : (path as WorkspacePath).segments;
    return this.root + segments.join('/');
  }

  /** The prefix of everything below `path` (the root's is the tenant root). */
  dirPrefix(path: WorkspacePath): string {
    return path.segments.length === 0 ? this.root : `${this.fileKey(path)}/`;
  }

  /** The workspace path of a key under the tenant root. */
  pathOf(key: string): string {
    const rel = key.slice(this.root.length).replace(/\/$/, '');
    return rel ? `${ROOT}/${rel}` : ROOT;
  }

  tempKey(): string {
    return this.#tmp + randomUUID();
  }

  /** The prefix of every knowledge copy of one Agent (`agentId` is checked by the caller). */
  knowledgePrefix(agentId: string): string {
    return `${this.#knowledge}${agentId}/`;
  }

  /** The key of an Agent's copy of the bytes whose SHA-256 is `sha256`. */
  knowledgeKey(agentId: string, sha256: string): string {
    return this.knowledgePrefix(agentId) + sha256;
  }
}
