import { errors } from '@workspace/platform';

export const HOME_PROJECT = 'Home';
const MAX_CHARS = 100;
/** A project's folder name is a path segment, and path segments are at most 255 UTF-8 bytes. */
const MAX_BYTES = 255;
const FORBIDDEN = /[/\\\p{Cc}]/u;

/** Throws INVALID_ARGUMENT (details.field = `field`) unless `name` is a valid project name. */
export function assertProjectName(name: string, field = 'name'): void {
  const fail = (why: string) => {
    throw errors.invalidArgument(`${field} ${why}`, field);
  };
  const chars = [...name].length;
  if (chars < 1 || chars > MAX_CHARS) fail(`must be 1–${MAX_CHARS} characters`);
  if (Buffer.byteLength(name, 'utf8') > MAX_BYTES) fail(`must be at most ${MAX_BYTES} UTF-8 bytes`);
  if (FORBIDDEN.test(name)) fail('must not contain "/", "\\" or control characters');
  if (name.trim() !== name) fail('must not start or end with white space');
  if (name === '.' || name === '..') fail('must not be "." or ".."');
}

/** The key names are compared by: Unicode NFKC, then lower case ("Home" = "HOME" = "ｈｏｍｅ"). */
export function projectKey(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}
