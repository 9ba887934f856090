import mime from 'mime-types';
import { compareBytes, segmentProblem } from './paths.js';
import type { StoredObject } from './ports.js';

export const OCTET_STREAM = 'application/octet-stream';

/** A listing entry; directories carry only path, name and type. */
export type Entry =
  | { type: 'directory'; path: string; name: string }
  | { type: 'file'; path: string; name: string; size: number; modifiedAt: string; mimeType: string; etag: string };

/** The media type of a file name's extension (`.md` → text/markdown), else application/octet-stream. */
export function mimeTypeOf(name: string): string {
  return mime.lookup(name) || OCTET_STREAM;
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function fileEntry(path: string, object: StoredObject): Entry {
  const name = lastSegment(path);
  return {
    type: 'file',
    path,
    name,
    size: object.size,
    modifiedAt: object.lastModified.toISOString(),
    mimeType: mimeTypeOf(name),
    etag: object.etag,
  };
}

export function directoryEntry(path: string): Entry {
  return { type: 'directory', path, name: lastSegment(path) };
}

/**
 * True when every segment of a key's relative part is a valid path segment. Keys written by
 * other tools (`a//b`, `dir/` markers, over-long names) are left out of listings rather than
 * shown as paths that no route would accept.
 */
export function isWorkspaceRelative(rel: string): boolean {
  return rel !== '' && rel.split('/').every((s) => segmentProblem(s) === undefined);
}

/** Entries sorted by path in UTF-8 byte order, each path once. */
export function sortEntries(entries: Iterable<Entry>): Entry[] {
  const byPath = new Map<string, Entry>();
  for (const e of entries) if (!byPath.has(e.path) || e.type === 'file') byPath.set(e.path, e);
  return [...byPath.values()].sort((a, b) => compareBytes(a.path, b.path));
}
