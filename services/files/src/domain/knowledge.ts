import { createHash } from 'node:crypto';
import { AppError, errors, isAppError } from '@workspace/platform';
import { mimeTypeOf } from './entries.js';
import { TenantLayout } from './layout.js';
import { baseName, parsePath, type WorkspacePath } from './paths.js';
import type { DistributedLock, ObjectStore, RemovedAgents, StoredObject } from './ports.js';
import { statFile } from './workspace.js';

/** A knowledge file as an Agent's configuration stores it (CONTRACT §7). */
export interface PinnedFile {
  path: string;
  size: number;
  /** SHA-256 of the bytes, lowercase hex: the address of the copy. */
  sha256: string;
  mimeType: string;
}

const AGENT_ID = /^agt_[0-9a-f]{32}$/;
/** Files of one request pinned at a time. */
const PIN_CONCURRENCY = 4;
/** Tries per file when it keeps changing between hashing and copying. */
const MAX_ATTEMPTS = 3;
/** Errors about one submitted path: they name it, and its position, for the caller's field name. */
const PATH_ERRORS = new Set(['INVALID_PATH', 'FILE_NOT_FOUND', 'IS_A_DIRECTORY']);

/**
 * Agents' knowledge copies. Pinning hashes a workspace file, then copies it (server-side) to
 * `kn/<tenant>/<agentId>/<sha256>` unless that key exists: equal bytes are copied once per
 * Agent, whatever their path or how often a configuration names them. An immutable config
 * thus pins immutable content: overwriting or deleting the workspace file does not touch it.
 *
 * The bytes hashed are the bytes copied: hashing runs outside the lock (it reads the whole
 * file), then, under the user's commit lock (which every upload commit and delete also take),
 * the file is checked to be the version that was hashed before it is copied; a file that
 * changed in between is hashed again.
 */
export class Knowledge {
  readonly #store: ObjectStore;
  readonly #lock: DistributedLock;
  readonly #removed: RemovedAgents;

  constructor(options: { store: ObjectStore; lock: DistributedLock; removed: RemovedAgents }) {
    this.#store = options.store;
    this.#lock = options.lock;
    this.#removed = options.removed;
  }

  /**
   * Pins every path for the Agent and returns them in order. A path error names the first
   * failing path in `paths` order (details.path as given, details.index).
   */
  async pin(userId: string, agentId: string, paths: readonly string[]): Promise<PinnedFile[]> {
    assertAgentId(agentId);
    const parsed = paths.map((raw, i) => located(raw, i, () => parsePath(raw)));
    if (await this.#removed.isRemoved(userId, agentId)) throw errors.notFound('agent', agentId);
    const layout = new TenantLayout(userId);
    return mapInOrder(parsed, PIN_CONCURRENCY, (path, i) => locatedAsync(paths[i]!, i, () => this.#pinOne(userId, layout, agentId, path)));
  }

  /**
   * Removes every copy of the Agent (idempotent), and marks it removed first, under the commit
   * lock, so that a pin still in flight either finished its copy before the listing below or
   * sees the mark and copies nothing. Returns how many copies were removed.
   */
  async removeAgent(userId: string, agentId: string): Promise<number> {
    // Nothing can be stored under an id that is not an Agent's (pin refuses it).
    if (!AGENT_ID.test(agentId)) return 0;
    const layout = new TenantLayout(userId);
    await this.#lock.withLock(layout.commitLock, () => this.#removed.mark(userId, agentId));
    const keys: string[] = [];
    for await (const page of this.#store.list(layout.knowledgePrefix(agentId), { recursive: true })) keys.push(...page.objects.map((o) => o.key));
    await this.#store.remove(keys);
    return keys.length;
  }

  async #pinOne(userId: string, layout: TenantLayout, agentId: string, path: WorkspacePath): Promise<PinnedFile> {
    const key = layout.fileKey(path);
    for (let attempt = 1; ; attempt++) {
      const source = await statFile(this.#store, layout, path);
      const { sha256, size } = await this.#hash(key, source.etag);
      const pinned =
        size === source.size &&
        (await this.#lock.withLock(layout.commitLock, async () => {
          const now = await this.#store.stat(key);
          if (!now || !sameVersion(now, source)) return undefined;
          if (await this.#removed.isRemoved(userId, agentId)) throw errors.notFound('agent', agentId);
          const target = layout.knowledgeKey(agentId, sha256);
          if (!(await this.#store.stat(target))) await this.#store.copy(key, target, size);
          return { path: path.path, size, sha256, mimeType: mimeTypeOf(baseName(path)) };
        }));
      if (pinned) return pinned;
      if (attempt >= MAX_ATTEMPTS) throw errors.unavailable(`${path.path} (it kept changing while it was being pinned)`);
    }
  }

  async #hash(key: string, etag: string): Promise<{ sha256: string; size: number }> {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of await this.#store.read(key, { etag })) {
      hash.update(chunk);
      size += chunk.byteLength;
    }
    return { sha256: hash.digest('hex'), size };
  }
}

function assertAgentId(agentId: string): void {
  if (!AGENT_ID.test(agentId)) throw errors.invalidArgument('agentId must be agt_ followed by 32 lowercase hex digits', 'agentId');
}

/** The same stored version: an overwrite changes the last-modified time, and the etag with the bytes. */
function sameVersion(a: StoredObject, b: StoredObject): boolean {
  return a.etag === b.etag && a.size === b.size && a.lastModified.getTime() === b.lastModified.getTime();
}

function relocate(err: unknown, raw: string, index: number): unknown {
  if (!isAppError(err) || !PATH_ERRORS.has(err.code)) return err;
  return new AppError(err.code, err.message, { details: { ...err.details, path: raw, index: String(index) }, cause: err.cause });
}

function located<T>(raw: string, index: number, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw relocate(err, raw, index);
  }
}

async function locatedAsync<T>(raw: string, index: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw relocate(err, raw, index);
  }
}

/**
 * `fn` over the items, at most `limit` at a time, results in order. Items start in order and
 * none starts after a failure, so the error thrown is the one of the first failing item.
 */
async function mapInOrder<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  const failures = new Map<number, unknown>();
  let next = 0;
  const worker = async () => {
    while (next < items.length && failures.size === 0) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (err) {
        failures.set(i, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.size > 0) throw failures.get(Math.min(...failures.keys()));
  return results;
}
