import { randomUUID } from 'node:crypto';
import { errors, type Logger } from '@workspace/platform';
import { mimeTypeOf } from './entries.js';
import { TenantLayout } from './layout.js';
import { ancestors, baseName, childPath, fromSegments, parsePath, ROOT, uniqueName, type WorkspacePath } from './paths.js';
import type { DistributedLock, FileEvents, ObjectStore } from './ports.js';

export type ConflictMode = 'error' | 'overwrite' | 'uuid';

export interface UploadInput {
  /** The destination as given; undefined when none was. */
  path: string | undefined;
  /** The file name from the multipart part header (may be empty). */
  filename: string;
  onConflict: ConflictMode;
}

export interface StoredFile {
  path: string;
  size: number;
  mimeType: string;
}

/** Ancestors are checked with this many HEAD requests at a time. */
const STAT_CONCURRENCY = 16;

/**
 * Storing files (CONTRACT §5). Bytes go straight to the file's key, but the object becomes
 * visible only at the commit (the single PUT of a small file, or the completion of a multipart
 * upload), so a failed or aborted upload leaves nothing and a failed overwrite leaves the old
 * content whole. Commits of one user are serialized by a lock shared by every replica, so the
 * checks (a file in the way, a directory at the name, an existing file) and the commit are one
 * atomic step: of concurrent `error` uploads to one new path exactly one wins, and no file ever
 * lands under a file. The change is reported (file.created or file.updated) in the same
 * critical section, right after the commit, so a user's events come in the order of the changes.
 *
 * One case cannot know its key until the commit: `uuid` to a name that was free when the upload
 * began (taken meanwhile → a new name). Its bytes go to a temporary key and are copied.
 */
export class Uploads {
  readonly #store: ObjectStore;
  readonly #lock: DistributedLock;
  readonly #events: FileEvents;
  readonly #maxBytes: number;
  readonly #logger: Logger;
  readonly #newId: () => string;

  constructor(options: { store: ObjectStore; lock: DistributedLock; events: FileEvents; maxUploadBytes: number; logger: Logger; newId?: () => string }) {
    this.#store = options.store;
    this.#lock = options.lock;
    this.#events = options.events;
    this.#maxBytes = options.maxUploadBytes;
    this.#logger = options.logger;
    this.#newId = options.newId ?? randomUUID;
  }

  /** Stores an uploaded file; `body` is read once, as it arrives. */
  async upload(userId: string, input: UploadInput, body: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const layout = new TenantLayout(userId);
    const target = await this.#destination(layout, input);
    // Fail fast, before any byte is stored; the commit checks again under the lock.
    const start = await this.#resolve(layout, target, input.onConflict);
    return this.#save(userId, target, input.onConflict, start.path, limited(body, this.#maxBytes));
  }

  /** Writes a small file in one piece (a project's context file). */
  async writeFile(userId: string, rawPath: string, content: Uint8Array, overwrite: boolean): Promise<StoredFile> {
    const target = parsePath(rawPath);
    if (target.segments.length === 0 || target.trailingSlash) throw errors.invalidPath('the path must name a file', rawPath);
    const layout = new TenantLayout(userId);
    const mode: ConflictMode = overwrite ? 'overwrite' : 'error';
    const start = await this.#resolve(layout, target, mode);
    return this.#save(userId, target, mode, start.path, (async function* () {
      yield content;
    })());
  }

  /** `planned` is where the file goes as far as the first check knows: the target, or a uuid name for it. */
  async #save(userId: string, target: WorkspacePath, mode: ConflictMode, planned: WorkspacePath, body: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    if (mode === 'uuid' && planned.path === target.path) return this.#saveViaCopy(userId, target, mode, body);
    const layout = new TenantLayout(userId);
    // A uuid name is new by construction: at the commit it only must still not sit under a file.
    const check: ConflictMode = mode === 'uuid' ? 'error' : mode;
    const { size } = await this.#store.write(layout.fileKey(planned), body, {
      contentType: mimeTypeOf(baseName(planned)),
      commit: (finish, size) =>
        this.#lock.withLock(layout.commitLock, async () => {
          const { replaces } = await this.#resolve(layout, planned, check);
          await finish();
          await this.#events.report(userId, [{ type: replaces ? 'file.updated' : 'file.created', path: planned.path, size }]);
        }),
    });
    return { path: planned.path, size, mimeType: mimeTypeOf(baseName(planned)) };
  }

  /** Through a temporary key: the final name is known only under the commit lock. */
  async #saveViaCopy(userId: string, target: WorkspacePath, mode: ConflictMode, body: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const layout = new TenantLayout(userId);
    const temp = layout.tempKey();
    // A write that fails leaves nothing (the store guarantees it); only a stored temp needs removing.
    const { size } = await this.#store.write(temp, body, { contentType: mimeTypeOf(baseName(target)) });
    try {
      const final = await this.#lock.withLock(layout.commitLock, async () => {
        const { path, replaces } = await this.#resolve(layout, target, mode);
        await this.#store.copy(temp, layout.fileKey(path), size);
        await this.#events.report(userId, [{ type: replaces ? 'file.updated' : 'file.created', path: path.path, size }]);
        return path;
      });
      return { path: final.path, size, mimeType: mimeTypeOf(baseName(final)) };
    } finally {
      await this.#store.remove([temp]).catch((err: unknown) => this.#logger.warn({ err, key: temp }, 'could not remove a temporary upload; the bucket lifecycle rule expires it'));
    }
  }

  /** CONTRACT §5: no path → /files/<filename>; `dir/` or an existing directory → <dir>/<filename>; else the path itself. */
  async #destination(layout: TenantLayout, input: UploadInput): Promise<WorkspacePath> {
    const named = (dir: WorkspacePath) => {
      if (input.filename === '') throw errors.invalidArgument('the file part needs a filename unless path names the file', 'file');
      return childPath(dir, input.filename);
    };
    if (input.path === undefined) return named(parsePath(ROOT));
    const given = parsePath(input.path);
    if (given.trailingSlash || given.segments.length === 0 || (await this.#store.hasAny(layout.dirPrefix(given)))) return named(given);
    return given;
  }

  /** Where the file goes given what exists now (and whether it replaces a file), or the conflict that stops it. */
  async #resolve(layout: TenantLayout, target: WorkspacePath, mode: ConflictMode): Promise<{ path: WorkspacePath; replaces: boolean }> {
    await this.#assertNoFileAbove(layout, target);
    const [file, directory] = await Promise.all([this.#store.stat(layout.fileKey(target)), this.#store.hasAny(layout.dirPrefix(target))]);
    if (!file && !directory) return { path: target, replaces: false };
    // A uuid name is new by construction (a v4 UUID does not collide).
    if (mode === 'uuid') return { path: fromSegments([...target.segments.slice(0, -1), uniqueName(baseName(target), this.#newId())]), replaces: false };
    if (directory) throw errors.pathConflict(target.path, 'a directory exists at this path');
    if (mode === 'error') throw errors.fileExists(target.path);
    return { path: target, replaces: true };
  }

  async #assertNoFileAbove(layout: TenantLayout, target: WorkspacePath): Promise<void> {
    const above = ancestors(target);
    for (let i = 0; i < above.length; i += STAT_CONCURRENCY) {
      const batch = above.slice(i, i + STAT_CONCURRENCY);
      const found = await Promise.all(batch.map((segments) => this.#store.stat(layout.fileKey(segments))));
      const at = found.findIndex(Boolean);
      if (at >= 0) throw errors.pathConflict(fromSegments(batch[at]!).path, 'a file exists where a directory is needed');
    }
  }
}

/** Passes `body` through, failing with PAYLOAD_TOO_LARGE as soon as it exceeds `max` bytes. */
async function* limited(body: AsyncIterable<Uint8Array>, max: number): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > max) throw errors.payloadTooLarge(max);
    yield chunk;
  }
}
