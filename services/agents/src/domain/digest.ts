import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { editableOf, type EditableFields } from './fields.js';

export const SCHEMA_VERSION = 1;

/** RFC 8785 (JCS) text of a JSON value: key order and number format never depend on the writer. */
export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new Error('value has no JSON form');
  return out;
}

/**
 * SHA-256 (hex) of the canonical JSON of `schemaVersion` and every editable field as stored, and
 * nothing else: equal content gives an equal digest, so a restored configuration has the digest
 * of the one it restores.
 */
export function contentDigest(fields: EditableFields, schemaVersion = SCHEMA_VERSION): string {
  return createHash('sha256').update(canonicalJson({ schemaVersion, ...editableOf(fields) }), 'utf8').digest('hex');
}
