import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { errors } from '@workspace/platform';
import type { Cursors } from './cursors.js';
import { directoryEntry, fileEntry, type Entry, type FileEntry, type IndexEntry } from './entries.js';
import { eventTemplate } from './events.js';
import { baseName, fromSegments, parsePath, ROOT, uniqueName, type WorkspacePath } from './paths.js';
import type { BlobStore, ConflictMode, FileIndex } from './ports.js';
import { checkSha256 } from './preconditions.js';
import { revisionContent } from './revisions.js';

/** One file of an export: its path below the folder, its bytes and when it was written. */
export interface ExportItem {
  rel: string;
  key: string;
  size: number;
  modifiedAt: Date;
}

/** Listing pages (docs/api/files.md#paging): 1,000 entries unless asked otherwise, at most 10,000. */
export const DEFAULT_PAGE = 1_000;
export const MAX_PAGE = 10_000;
/**
 * An unpaged listing is read from the index in steps of this many entries (a step blocks Redis
 * for its duration); when the tree keeps changing between steps, the last attempt reads it all
 * in one step.
 */
const UNPAGED_STEP = 20_000;
const SNAPSHOT_ATTEMPTS = 3;
/** "Everything at once" (the script sends the limit to Redis as a whole number). */
const ONE_STEP = 10_000_000;

/** One file as read, with the revision its bytes are (docs/api/files.md#revisions). */
export type StatEntry = FileEntry & { revision: string };

/** A listed path: a file with its index entry, or a directory (no entry). */
export type ListedPath = { path: string; entry: IndexEntry | undefined };

export interface ListResult {
  path: string;
  /** The files (with their index entry) and directories listed, in byte order. */
  entries: ListedPath[];
  /** Paged listings only: the next page's cursor, or undefined on the last page. */
  next?: string | undefined;
}

/**
 * Reading, listing, deleting, moving and copying one user's files (docs/api/files.md), all
 * on the metadata index: the object store is touched only to read bytes.
 */
export class Workspace {
  readonly #index: FileIndex;
  readonly #blobs: BlobStore;
  readonly #cursors: Cursors;
  readonly #maxReadBytes: number;
  readonly #downloadUrlSeconds: number;

  constructor(options: { index: FileIndex; blobs: BlobStore; cursors: Cursors; maxReadBytes: number; downloadUrlSeconds?: number }) {
    this.#index = options.index;
    this.#blobs = options.blobs;
    this.#cursors = options.cursors;
    this.#maxReadBytes = options.maxReadBytes;
    this.#downloadUrlSeconds = options.downloadUrlSeconds ?? 3600;
  }

  /**
   * Every entry under `rawPath` (or the one entry of a file), in byte order, as of one state of
   * the tree: a listing never sees half of a move, however long (docs/api/files.md#move-and-copy).
   */
  async list(userId: string, rawPath: string, recursive: boolean): Promise<ListResult> {
    const path = parsePath(rawPath);
    const found = await this.#snapshot(userId, path.path, recursive);
    if (found.kind === 'file') return { path: path.path, entries: [{ path: path.path, entry: found.entry }] };
    return { path: path.path, entries: found.entries };
  }

  /** One page of at most `limit` entries after the cursor's position (docs/api/files.md#paging). */
  async listPage(userId: string, rawPath: string, recursive: boolean, limit: number, cursor: string): Promise<ListResult> {
    const path = parsePath(rawPath);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw errors.invalidArgument(`limit must be 1 to ${MAX_PAGE}`, 'limit');
    const scope = `list:${recursive ? 'r' : 'd'}:${path.path}`;
    const after = cursor === '' ? '' : this.#cursors.verify(userId, scope, cursor);
    const page = await this.#index.list(userId, { path: path.path, recursive, after, limit });
    if (page.kind === 'file') return { path: path.path, entries: after === '' ? [{ path: path.path, entry: page.entry }] : [] };
    const last = page.entries.at(-1)?.path;
    return { path: path.path, entries: page.entries, next: page.more && last ? this.#cursors.sign(userId, scope, last) : undefined };
  }

  /**
   * One file's metadata: IS_A_DIRECTORY for a directory (the root too), else FILE_NOT_FOUND. With
   * `revision`, that revision's (docs/api/files.md#revisions), whatever is at the path now:
   * REVISION_NOT_FOUND.
   */
  async stat(userId: string, rawPath: string, revision = ''): Promise<StatEntry & { key: string }> {
    const path = parsePath(rawPath);
    const entry = revision === '' ? await this.#file(userId, path) : await revisionContent(this.#index, userId, path, revision);
    return { ...fileEntry(path.path, entry), revision: entry.revision, key: entry.key };
  }

  /**
   * A UTF-8 text file of at most the read limit (inclusive), whole, with the entry it was read
   * from: its bytes never change, so the entry (sha256, revision) is exactly what was read.
   */
  async read(userId: string, rawPath: string, revision = ''): Promise<{ file: StatEntry; content: Buffer }> {
    const { key, ...file } = await this.stat(userId, rawPath, revision);
    if (file.size > this.#maxReadBytes) throw errors.fileTooLarge(file.path, this.#maxReadBytes);
    const chunks: Buffer[] = [];
    for await (const chunk of await this.#blobs.read(key)) chunks.push(Buffer.from(chunk));
    const content = Buffer.concat(chunks);
    if (!isUtf8(content)) throw errors.fileNotText(file.path);
    return { file, content };
  }

  /** The file's metadata and a presigned URL of its (immutable) bytes. */
  async openDownload(userId: string, rawPath: string, revision = ''): Promise<{ entry: StatEntry; url: string }> {
    const { key, ...entry } = await this.stat(userId, rawPath, revision);
    return { entry, url: await this.#blobs.presignGet(key, this.#downloadUrlSeconds) };
  }

  /**
   * Deletes a file, or a directory with everything below it when `recursive`: into the trash
   * (docs/api/files.md#trash), or with `permanent` for good, with every revision and trashed file
   * there.
   */
  async delete(userId: string, rawPath: string, recursive: boolean, permanent = false, ifMatch?: string): Promise<{ path: string }> {
    const path = parsePath(rawPath);
    if (path.segments.length === 0) throw errors.invalidPath('the workspace root cannot be deleted', ROOT);
    const condition = checkSha256(ifMatch, 'If-Match');
    const event = eventTemplate(userId, path.path);
    await (permanent ? this.#index.purge(userId, path.path, recursive, event, condition) : this.#index.delete(userId, path.path, recursive, event, condition));
    return { path: path.path };
  }

  /**
   * Creates a folder explicitly, with its missing parents (docs/api/files.md#folders): it stays,
   * empty, until it is deleted. `created` is false when a directory was already there.
   */
  async createDirectory(userId: string, rawPath: string): Promise<{ path: string; created: boolean }> {
    const path = parsePath(rawPath);
    const { created } = await this.#index.createDirectory(userId, path.path, eventTemplate(userId, path.path));
    return { path: path.path, created };
  }

  /** Moves (or copies) a file or a directory; the index alone changes, whatever the sizes. */
  async move(userId: string, op: 'move' | 'copy', input: { from: string; to: string; onConflict: ConflictMode; ifMatch?: string | undefined; ifMatchTo?: string | undefined }): Promise<{ from: string; path: string }> {
    const from = parsePath(input.from);
    const to = parsePath(input.to);
    if (from.segments.length === 0) throw errors.invalidPath(`the workspace root cannot be ${op === 'move' ? 'moved' : 'copied'}`, ROOT);
    if (to.segments.length === 0) throw errors.invalidPath('the destination cannot be the workspace root', ROOT);
    if (to.path === from.path || to.path.startsWith(`${from.path}/`)) throw errors.invalidPath('the destination cannot be the source or lie below it', to.path);
    const uuidPath = uuidSibling(to);
    const ifMatch = checkSha256(input.ifMatch, 'If-Match');
    const ifMatchTo = checkSha256(input.ifMatchTo, 'ifMatchTo');
    const moved = await this.#index.move(userId, { op, from: from.path, to: to.path, mode: input.onConflict, uuidPath, event: eventTemplate(userId, to.path), ifMatch, ifMatchTo });
    return { from: from.path, path: moved.path };
  }

  /**
   * The files under a folder, in byte order, as of one state of the tree, for an export: the
   * archive holds one tree or the other of a move, never parts of both.
   */
  async exportItems(userId: string, rawPath: string): Promise<ExportItem[]> {
    const path = parsePath(rawPath);
    const found = await this.#snapshot(userId, path.path, true).catch((err: { code?: string }) => {
      if (err.code === 'FILE_NOT_FOUND') return undefined; // an empty folder exports an empty archive
      throw err;
    });
    if (!found || found.kind === 'file') return [];
    // Files, and the folders that hold nothing (explicit ones, docs/api/files.md#folders) as `<rel>/`
    // with no bytes (key ''): a folder that holds something is implied by its files.
    const now = new Date();
    const cut = path.path.length + 1;
    return found.entries.flatMap((e, i) => {
      if (e.entry) return [{ rel: e.path.slice(cut), key: e.entry.key, size: e.entry.size, modifiedAt: new Date(e.entry.mtime) }];
      const next = found.entries[i + 1];
      return next?.path.startsWith(`${e.path}/`) ? [] : [{ rel: `${e.path.slice(cut)}/`, key: '', size: 0, modifiedAt: now }];
    });
  }

  /**
   * All of a listing, read in steps that each are atomic; when the tree changed between the
   * steps (another version), read again, and at last in one step whatever its size.
   */
  async #snapshot(userId: string, path: string, recursive: boolean): Promise<{ kind: 'file'; entry: IndexEntry } | { kind: 'directory'; entries: ListedPath[] }> {
    for (let attempt = 1; ; attempt++) {
      const step = attempt < SNAPSHOT_ATTEMPTS ? UNPAGED_STEP : ONE_STEP;
      const entries: ListedPath[] = [];
      let version: string | undefined;
      let consistent = true;
      for (let after = ''; ; ) {
        const page = await this.#index.list(userId, { path, recursive, after, limit: step });
        if (page.kind === 'file') return page;
        version ??= page.version;
        if (page.version !== version) {
          consistent = false;
          break;
        }
        entries.push(...page.entries);
        if (!page.more) break;
        after = page.entries.at(-1)!.path;
      }
      if (consistent) return { kind: 'directory', entries };
    }
  }

  async #file(userId: string, path: WorkspacePath): Promise<IndexEntry> {
    if (path.segments.length === 0) throw errors.isADirectory(ROOT);
    const [found] = await this.#index.stat(userId, [path.path]);
    if (found === 'directory') throw errors.isADirectory(path.path);
    if (!found) throw errors.notFound('file', path.path);
    return found;
  }
}

/**
 * `<dir>/<stem>-<uuid>.<ext>` beside `path` (docs/api/files.md#upload): new by construction. ''
 * when the name leaves no room for the suffix (the index refuses the uuid case then).
 */
export function uuidSibling(path: WorkspacePath): string {
  try {
    return fromSegments([...path.segments.slice(0, -1), uniqueName(baseName(path), randomUUID())]).path;
  } catch {
    return '';
  }
}

/** A listed path as the API's entry. */
export function toEntry(e: ListedPath): Entry {
  return e.entry ? fileEntry(e.path, e.entry) : directoryEntry(e.path);
}
