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
