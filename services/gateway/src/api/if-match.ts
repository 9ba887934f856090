import { errors } from '@workspace/platform';

/**
 * The one strong entity tag of an `If-Match` header (`"cfg_…"`), or undefined without the
 * header. A PATCH names exactly the config it is based on, so `*` (any version) and lists are
 * refused rather than guessed at; a weak tag (`W/"…"`) never matches under If-Match's strong
 * comparison, so it is kept and fails the precondition as RFC 9110 says.
 */
export function parseIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') throw errors.invalidArgument('If-Match: * is not supported; send the ETag ("cfg_…") the edit is based on', 'If-Match');
  const match = /^(W\/)?"([\x21\x23-\x7e]*)"$/.exec(value);
  if (!match) throw errors.invalidArgument('If-Match must be one entity tag such as "cfg_…"', 'If-Match');
  return match[1] ? `W/${match[2]}` : match[2];
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * A file precondition's `If-Match` (docs/api/files.md#preconditions): the file's ETag, a quoted
 * SHA-256 of 64 hex digits (`"<sha256>"`), as its lowercase hex; undefined without the header.
 * `*`, lists, weak tags and anything else → 400 INVALID_ARGUMENT (details.field `If-Match`).
 */
export function parseFileIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const bad = () => errors.invalidArgument('If-Match must be the file\'s ETag: a quoted SHA-256 of 64 hex digits ("<sha256>")', 'If-Match');
  let tag: string | undefined;
  try {
    tag = parseIfMatch(header);
  } catch {
    throw bad();
  }
  const sha = tag?.toLowerCase();
  if (sha === undefined || !SHA256.test(sha)) throw bad();
  return sha;
}

/**
 * An upload's `If-None-Match` (docs/api/files.md#preconditions): only `*` (store only where
 * nothing is) → true; undefined without the header; anything else → 400 INVALID_ARGUMENT.
 */
export function parseIfNoneMatchStar(header: string | undefined): true | undefined {
  if (header === undefined) return undefined;
  if (header.trim() !== '*') throw errors.invalidArgument('If-None-Match on an upload must be * (store only where nothing is)', 'If-None-Match');
  return true;
}
