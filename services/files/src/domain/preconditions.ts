import { errors } from '@workspace/platform';

const SHA256 = /^[0-9a-f]{64}$/;

/** A precondition's sha256 (docs/api/files.md#preconditions) as the index takes it: '' for none. */
export function checkSha256(value: string | undefined, field: string): string {
  if (value === undefined || value === '') return '';
  if (!SHA256.test(value)) throw errors.invalidArgument(`${field} must be a SHA-256 of 64 lowercase hex digits`, field);
  return value;
}
