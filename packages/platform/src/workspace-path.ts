import { errors } from './errors/app-error.js';

/** The workspace root; every path given to or returned by the API starts with it. */
export const ROOT = '/files';
export const MAX_SEGMENT_BYTES = 255;
/** Leaves room for any storage prefix within S3's 1024-byte key limit. */
export const MAX_PATH_BYTES = 900;

/** A path that passed the rules of parsePath. */
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
 * The one parser of workspace paths, for every service that takes one (the files service, and
 * the gateway for paths that arrive inside a document, such as an Agent archive). Takes the
 * path exactly as the HTTP layer decoded it (never decodes again) and throws INVALID_PATH for
 * anything that breaks the rules: it is `/files` or starts with `/files/`; no empty, `.` or
 * `..` segments; no backslash, control character or lone surrogate; a segment at most 255
 * UTF-8 bytes, the path at most 900. A single trailing `/` is accepted and dropped;
 * `trailingSlash` remembers it.
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
