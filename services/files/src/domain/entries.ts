import { mimeTypeOf } from './media-types.js';

/** A file as the index holds it: its bytes are the immutable object `key`. */
export interface IndexEntry {
  size: number;
  /** Milliseconds since the epoch. */
  mtime: number;
  /** 64 lowercase hex. */
  sha256: string;
  /** The object holding the bytes (never derived from the path). */
  key: string;
  revision: string;
}

/** A listing entry as the API shows it; directories carry only path, name and type. */
export type Entry =
  | { type: 'directory'; path: string; name: string }
  | { type: 'file'; path: string; name: string; size: number; modifiedAt: string; mimeType: string; sha256: string };

export type FileEntry = Extract<Entry, { type: 'file' }>;

/** `size|mtime|sha256|key|revision`: compact, and readable by the index's Lua. */
export function encodeEntry(e: IndexEntry): string {
  return `${e.size}|${e.mtime}|${e.sha256}|${e.key}|${e.revision}`;
}

export function decodeEntry(raw: string): IndexEntry {
  const [size = '0', mtime = '0', sha256 = '', key = '', revision = ''] = raw.split('|');
  return { size: Number(size), mtime: Number(mtime), sha256, key, revision };
}

/**
 * One record of a path's history (docs/api/files.md#revisions): a revision of its content, or a
 * deletion that carries the last content (what a restore brings back), so a trashed file needs
 * nothing else.
 */
export interface HistoryRecord {
  revision: string;
  deleted: boolean;
  /** The content's modification time (ms); for a deletion, the last content's. */
  mtime: number;
  size: number;
  sha256: string;
  /** The object holding the content's bytes. */
  key: string;
  /** When the record was made (ms): for a deletion, when the file was deleted. */
  recordedAt: number;
  /** For a deletion: the revision of the last content. */
  last: string;
}

/** `revision|deleted|mtime|size|sha256|key|recordedAt|last`, as the index's Lua writes it. */
export function decodeRecord(raw: string): HistoryRecord {
  const [revision = '', deleted = '0', mtime = '0', size = '0', sha256 = '', key = '', recordedAt = '0', last = ''] = raw.split('|');
  return { revision, deleted: deleted === '1', mtime: Number(mtime), size: Number(size), sha256, key, recordedAt: Number(recordedAt), last };
}

export function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function fileEntry(path: string, e: IndexEntry): FileEntry {
  const name = lastSegment(path);
  return { type: 'file', path, name, size: e.size, modifiedAt: new Date(e.mtime).toISOString(), mimeType: mimeTypeOf(name), sha256: e.sha256 };
}

export function directoryEntry(path: string): Entry {
  return { type: 'directory', path, name: lastSegment(path) };
}

/**
 * A listed path as the HTTP API's JSON entry (docs/api/files.md#list): `{path, name, type}`, plus
 * the stats of a file when asked. Rendered here, once, straight from the index entry: a listing of
 * 10,000 files makes 10,000 strings, not objects to be encoded field by field by each process
 * it passes.
 */
export function entryJson(path: string, e: IndexEntry | undefined, includeStats: boolean): string {
  const name = lastSegment(path);
  const head = `{"path":${JSON.stringify(path)},"name":${JSON.stringify(name)},"type":"${e ? 'file' : 'directory'}"`;
  if (!e || !includeStats) return `${head}}`;
  return `${head},"size":${e.size},"modifiedAt":"${new Date(e.mtime).toISOString()}","mimeType":${JSON.stringify(mimeTypeOf(name))},"sha256":"${e.sha256}"}`;
}
