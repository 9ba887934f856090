import { errors } from '@workspace/platform';
import { lastSegment, type HistoryRecord, type IndexEntry } from './entries.js';
import { mimeTypeOf } from './media-types.js';
import { eventTemplate } from './events.js';
import { parsePath, ROOT, type WorkspacePath } from './paths.js';
import type { FileIndex } from './ports.js';
import { checkSha256 } from './preconditions.js';

/** A revisions listing holds at most this many, newest first (docs/api/files.md#revisions). */
export const MAX_REVISIONS_LISTED = 100;
const REVISION = /^rev_[0-9a-f]{32}$/;

/** One revision as the API shows it: a deletion carries no content. */
export type RevisionInfo =
  | { revision: string; deleted: true; modifiedAt: string }
  | { revision: string; deleted: false; modifiedAt: string; size: number; sha256: string; mimeType: string };

/** A file in the trash: its last content (`revision`, what a restore brings back) and when it went. */
export interface TrashEntry {
  path: string;
  name: string;
  size: number;
  sha256: string;
  mimeType: string;
  deletedAt: string;
  revision: string;
}

export interface RestoredFile {
  path: string;
  size: number;
  mimeType: string;
  sha256: string;
  /** The new revision the restore made. */
  revision: string;
}

/**
 * The content of one revision of a file path (an entry carrying that revision): REVISION_NOT_FOUND
 * unless it is one of the path's revisions with content (a deletion has none).
 */
export async function revisionContent(index: FileIndex, userId: string, path: WorkspacePath, revision: string): Promise<IndexEntry> {
  const found = REVISION.test(revision) && path.segments.length > 0 ? await index.revision(userId, path.path, revision) : undefined;
  if (!found) throw errors.notFound('revision', revision);
  return found;
}

/**
 * Undo for the workspace (docs/api/files.md#revisions): every write of a path is a revision in its
 * history and every delete a deletion, all in the index and all pointing at immutable bytes, so
 * nothing is stored twice. Restores are writes: a new revision, a change in the feed and an event.
 */
export class Revisions {
  readonly #index: FileIndex;

  constructor(options: { index: FileIndex }) {
    this.#index = options.index;
  }

  /** A path's revisions, newest first; FILE_NOT_FOUND for a path that never held a file. */
  async list(userId: string, rawPath: string): Promise<{ path: string; revisions: RevisionInfo[] }> {
    const path = parsePath(rawPath);
    const { current, records } = await this.#index.history(userId, path.path);
    // A file written before histories existed is its own (only) revision until it changes.
    const all = typeof current === 'object' && records[0]?.revision !== current.revision ? [currentRecord(current), ...records] : records;
    if (all.length === 0) throw errors.notFound('file', path.path);
    const mimeType = mimeTypeOf(lastSegment(path.path));
    return { path: path.path, revisions: all.slice(0, MAX_REVISIONS_LISTED).map((r) => revisionInfo(r, mimeType)) };
  }

  /** The trashed files directly in `path` (with `recursive`: anywhere below it), newest deletion first. */
  async trash(userId: string, rawPath: string, recursive: boolean): Promise<{ path: string; recursive: boolean; entries: TrashEntry[] }> {
    const path = parsePath(rawPath);
    const found = await this.#index.trash(userId, path.path, recursive);
    found.sort((a, b) => b.record.recordedAt - a.record.recordedAt || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const entries = found.map(({ path: p, record: r }) => {
      const name = lastSegment(p);
      return { path: p, name, size: r.size, sha256: r.sha256, mimeType: mimeTypeOf(name), deletedAt: new Date(r.recordedAt).toISOString(), revision: r.last };
    });
    return { path: path.path, recursive, entries };
  }

  /** Makes a revision's bytes the file at `path` again, whether a file is there now or it was deleted. */
  async restore(userId: string, rawPath: string, revision: string, ifMatch?: string): Promise<RestoredFile> {
    const path = parsePath(rawPath);
    if (path.segments.length === 0) throw errors.invalidPath('the workspace root is a directory', ROOT);
    const condition = checkSha256(ifMatch, 'If-Match');
    if (!REVISION.test(revision)) throw errors.notFound('revision', revision);
    const { entry } = await this.#index.restore(userId, { path: path.path, revision, event: eventTemplate(userId, path.path), ifMatch: condition });
    return { path: path.path, size: entry.size, mimeType: mimeTypeOf(lastSegment(path.path)), sha256: entry.sha256, revision: entry.revision };
  }

  /** Restores every trashed file at or below `path` to its last content, in one atomic step. */
  async restoreTree(userId: string, rawPath: string, ifMatch?: string): Promise<{ path: string; restored: number }> {
    const path = parsePath(rawPath);
    const condition = checkSha256(ifMatch, 'If-Match');
    const { restored } = await this.#index.restoreTree(userId, { path: path.path, event: eventTemplate(userId, path.path), ifMatch: condition });
    return { path: path.path, restored };
  }
}

function currentRecord(e: IndexEntry): HistoryRecord {
  return { revision: e.revision, deleted: false, mtime: e.mtime, size: e.size, sha256: e.sha256, key: e.key, recordedAt: e.mtime, last: '' };
}

function revisionInfo(r: HistoryRecord, mimeType: string): RevisionInfo {
  if (r.deleted) return { revision: r.revision, deleted: true, modifiedAt: new Date(r.recordedAt).toISOString() };
  return { revision: r.revision, deleted: false, modifiedAt: new Date(r.mtime).toISOString(), size: r.size, sha256: r.sha256, mimeType };
}
