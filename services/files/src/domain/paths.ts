import { errors, parsePath, ROOT, segmentProblem, type WorkspacePath } from '@workspace/platform';

/** The rules and their one parser are shared (the gateway checks paths inside Agent archives with it). */
export { MAX_PATH_BYTES, MAX_SEGMENT_BYTES, parsePath, ROOT, segmentProblem, type WorkspacePath } from '@workspace/platform';

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
