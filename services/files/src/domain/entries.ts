import mime from 'mime-types';

export const OCTET_STREAM = 'application/octet-stream';

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

/** The media type of a file name's extension (`.md` → text/markdown), else application/octet-stream. */
export function mimeTypeOf(name: string): string {
  return mime.lookup(name) || OCTET_STREAM;
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
