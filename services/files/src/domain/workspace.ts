import { isUtf8 } from 'node:buffer';
import { errors } from '@workspace/platform';
import { directoryEntry, fileEntry, isWorkspaceRelative, sortEntries, type Entry } from './entries.js';
import { TenantLayout } from './layout.js';
import { parsePath, ROOT, type WorkspacePath } from './paths.js';
import type { ByteRange, DistributedLock, FileEvents, ObjectStore, StoredObject } from './ports.js';

const REMOVE_BATCH = 1_000;

/**
 * Reading, listing and deleting one user's files (CONTRACT §3, §5). Deletes run under the
 * user's commit lock (the one uploads commit under) and report file.deleted in the same
 * critical section, so a user's file events follow the order of the changes.
 */
export class Workspace {
  readonly #store: ObjectStore;
  readonly #lock: DistributedLock;
  readonly #events: FileEvents;
  readonly #maxReadBytes: number;

  constructor(options: { store: ObjectStore; lock: DistributedLock; events: FileEvents; maxReadBytes: number }) {
    this.#store = options.store;
    this.#lock = options.lock;
    this.#events = options.events;
    this.#maxReadBytes = options.maxReadBytes;
  }

  /** The entries under `rawPath` (or the one entry of a file), sorted by path in byte order. */
  async list(userId: string, rawPath: string, recursive: boolean): Promise<{ path: string; entries: Entry[] }> {
    const path = parsePath(rawPath);
    const layout = new TenantLayout(userId);
    if (path.segments.length > 0) {
      const file = await this.#store.stat(layout.fileKey(path));
      if (file) return { path: path.path, entries: [fileEntry(path.path, file)] };
    }
    const prefix = layout.dirPrefix(path);
    const found: Entry[] = [];
    let any = false;
    for await (const page of this.#store.list(prefix, { recursive })) {
      any ||= page.objects.length > 0 || page.prefixes.length > 0;
      for (const dir of page.prefixes) {
        if (isWorkspaceRelative(dir.slice(prefix.length, -1))) found.push(directoryEntry(layout.pathOf(dir)));
      }
      for (const object of page.objects) {
        const rel = object.key.slice(prefix.length);
        if (!isWorkspaceRelative(rel)) continue;
        found.push(fileEntry(layout.pathOf(object.key), object));
        if (recursive) found.push(...intermediateDirectories(path, rel));
      }
    }
    if (!any && path.segments.length > 0) throw errors.notFound('file', path.path);
    return { path: path.path, entries: sortEntries(found) };
  }

  /** One file's metadata: IS_A_DIRECTORY for a directory (the root too), else FILE_NOT_FOUND. */
  async stat(userId: string, rawPath: string): Promise<Entry & { type: 'file' }> {
    const path = parsePath(rawPath);
    const layout = new TenantLayout(userId);
    const object = await this.#statFile(layout, path);
    return fileEntry(path.path, object) as Entry & { type: 'file' };
  }

  /** A UTF-8 text file of at most the read limit (inclusive), whole. */
  async read(userId: string, rawPath: string): Promise<{ path: string; content: Buffer }> {
    const path = parsePath(rawPath);
    const layout = new TenantLayout(userId);
    const object = await this.#statFile(layout, path);
    if (object.size > this.#maxReadBytes) throw errors.fileTooLarge(path.path, this.#maxReadBytes);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of await this.#store.read(object.key, { etag: object.etag })) {
      size += chunk.byteLength;
      if (size > this.#maxReadBytes) throw errors.fileTooLarge(path.path, this.#maxReadBytes);
      chunks.push(Buffer.from(chunk));
    }
    const content = Buffer.concat(chunks);
    if (!isUtf8(content)) throw errors.fileNotText(path.path);
    return { path: path.path, content };
  }

  /** The bytes of a file, or of one range; with `etag`, only while the file still has it. */
  async download(userId: string, rawPath: string, options: { range?: ByteRange; etag?: string; signal?: AbortSignal }): Promise<AsyncIterable<Uint8Array>> {
    const path = parsePath(rawPath);
    const layout = new TenantLayout(userId);
    if (path.segments.length === 0) throw errors.isADirectory(ROOT);
    try {
      return await this.#store.read(layout.fileKey(path), options);
    } catch (err) {
      if ((err as { code?: string }).code === 'FILE_NOT_FOUND') await this.#statFile(layout, path);
      throw err;
    }
  }

  /** Deletes a file, or a directory with everything below it when `recursive`. */
  async delete(userId: string, rawPath: string, recursive: boolean): Promise<{ path: string }> {
    const path = parsePath(rawPath);
    if (path.segments.length === 0) throw errors.invalidPath('the workspace root cannot be deleted', ROOT);
    const layout = new TenantLayout(userId);
    const key = layout.fileKey(path);
    const removedFile = await this.#lock.withLock(layout.commitLock, async () => {
      if (!(await this.#store.stat(key))) return false;
      await this.#removeAndReport(userId, layout, [key]);
      return true;
    });
    if (removedFile) return { path: path.path };
    const prefix = layout.dirPrefix(path);
    if (!(await this.#store.hasAny(prefix))) throw errors.notFound('file', path.path);
    if (!recursive) throw errors.directoryNotEmpty(path.path);
    // One lock per batch, not for the whole tree: a large delete never holds the user's uploads
    // off for long, and each file's removal and its event still share one critical section.
    let batch: string[] = [];
    const flush = async () => {
      const keys = batch;
      batch = [];
      if (keys.length > 0) await this.#lock.withLock(layout.commitLock, () => this.#removeAndReport(userId, layout, keys));
    };
    for await (const page of this.#store.list(prefix, { recursive: true })) {
      batch.push(...page.objects.map((o) => o.key));
      if (batch.length >= REMOVE_BATCH) await flush();
    }
    await flush();
    return { path: path.path };
  }

  /** Removes the keys and reports file.deleted for those that are workspace paths; call under the commit lock. */
  async #removeAndReport(userId: string, layout: TenantLayout, keys: string[]): Promise<void> {
    await this.#store.remove(keys);
    const paths = keys.filter((k) => isWorkspaceRelative(k.slice(layout.root.length))).map((k) => layout.pathOf(k));
    if (paths.length > 0) await this.#events.report(userId, paths.map((p) => ({ type: 'file.deleted' as const, path: p })));
  }

  #statFile(layout: TenantLayout, path: WorkspacePath): Promise<StoredObject> {
    return statFile(this.#store, layout, path);
  }
}

/** The object at a file path; IS_A_DIRECTORY (the root too) or FILE_NOT_FOUND otherwise. */
export async function statFile(store: ObjectStore, layout: TenantLayout, path: WorkspacePath): Promise<StoredObject> {
  if (path.segments.length === 0) throw errors.isADirectory(ROOT);
  const object = await store.stat(layout.fileKey(path));
  if (object) return object;
  if (await store.hasAny(layout.dirPrefix(path))) throw errors.isADirectory(path.path);
  throw errors.notFound('file', path.path);
}

/** The directories between a listed path and a file `rel` below it: a/b/c.txt → a, a/b. */
function intermediateDirectories(base: WorkspacePath, rel: string): Entry[] {
  const parts = rel.split('/').slice(0, -1);
  return parts.map((_, i) => directoryEntry(`${base.path}/${parts.slice(0, i + 1).join('/')}`));
}
