import { errors } from '@workspace/platform';

/** The workspace root; every path given to or returned by the API starts with it. */
export const ROOT = '/files';
export const MAX_SEGMENT_BYTES = 255;
/** Leaves room for any storage prefix within S3's 1024-byte key limit. */
export const MAX_PATH_BYTES = 900;

/** A path that passed the rules of CONTRACT §3. */
export interface WorkspacePath {
  /** Normalized: `/files` or `/files/a/b`, never a trailing slash. */
  readonly path: string;
  /** Segments below the root: [] for `/files`, ['a', 'b'] for `/files/a/b`. */
  readonly segments: readonly string[];
  /** The input ended in `/` (meaningful only for an upload's destination). */
  readonly trailingSlash: boolean;
}

// C0, DEL and C1 control characters (NUL included).
const CONTROL = /\p{Cc}/u;
// A lone UTF-16 surrogate: not Unicode text, and not representable in UTF-8 or an S3 key.
const LONE_SURROGATE = /\p{Cs}/u;

function bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Why `segment` cannot be a path segment, or undefined when it can. */
export function segmentProblem(segment: string): string | undefined {
  if (segment === '') return 'empty segments ("//") are not allowed';
  if (segment === '.' || segment === '..') return '"." and ".." segments are not allowed';
  if (segment.includes('/')) return 'a name cannot contain "/"';
  if (segment.includes('\\')) return 'backslashes are not allowed';
  if (CONTROL.test(segment)) return 'control characters are not allowed';
  if (LONE_SURROGATE.test(segment)) return 'the path is not valid Unicode';
  if (bytes(segment) > MAX_SEGMENT_BYTES) return `a segment is longer than ${MAX_SEGMENT_BYTES} UTF-8 bytes`;
  return undefined;
}

/**
 * The one parser of workspace paths. Takes the path exactly as the HTTP layer decoded it
 * (never decodes again) and throws INVALID_PATH for anything that breaks CONTRACT §3. A single
 * trailing `/` is accepted and dropped; `trailingSlash` remembers it.
 */
export function parsePath(raw: string): WorkspacePath {
  const fail = (why: string): never => {
    throw errors.invalidPath(`invalid path: ${why}`, raw.length <= 1024 ? raw : undefined);
  };
  if (raw !== ROOT && !raw.startsWith(`${ROOT}/`)) fail(`it must be "${ROOT}" or start with "${ROOT}/"`);
  const trailingSlash = raw.length > ROOT.length && raw.endsWith('/');
  const path = trailingSlash ? raw.slice(0, -1) : raw;
  const segments = path === ROOT ? [] : path.slice(ROOT.length + 1).split('/');
  for (const segment of segments) {
    const problem = segmentProblem(segment);
    if (problem) fail(problem);
  }
  if (bytes(path) > MAX_PATH_BYTES) fail(`it is longer than ${MAX_PATH_BYTES} UTF-8 bytes`);
  return { path, segments, trailingSlash };
}

/** The path of `segments` below the root. */
export function fromSegments(segments: readonly string[]): WorkspacePath {
  return parsePath(segments.length === 0 ? ROOT : `${ROOT}/${segments.join('/')}`);
}

/** `parent/name`, checked against every rule. */
export function childPath(parent: WorkspacePath, name: string): WorkspacePath {
  const problem = segmentProblem(name);
  if (problem) throw errors.invalidPath(`invalid file name: ${problem}`);
  return fromSegments([...parent.segments, name]);
}

/** The last segment (`files` for the root). */
export function baseName(path: WorkspacePath): string {
  return path.segments.at(-1) ?? 'files';
}

/** Every proper ancestor below the root, nearest to the root first: /files/a, /files/a/b for /files/a/b/c. */
export function ancestors(path: WorkspacePath): string[][] {
  return path.segments.slice(0, -1).map((_, i) => path.segments.slice(0, i + 1));
}

/**
 * `notes.md` → `notes-<id>.md`, `Makefile` → `Makefile-<id>`, `.env` → `.env-<id>`: the
 * extension is the text after the last dot of a name that does not start with a dot.
 */
export function uniqueName(name: string, id: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return `${name}-${id}`;
  return `${name.slice(0, dot)}-${id}${name.slice(dot)}`;
}

/** Byte order of UTF-8 (what S3 lists in), not JavaScript's UTF-16 order. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
