import type { AppError } from './app-error.js';
import type { ErrorCode } from './codes.js';

/** An error's details as the HTTP envelope shows them: text, whole numbers where a detail is a figure, null where one is absent. */
export type JsonDetails = Record<string, string | number | null>;

/**
 * The details that are figures, by code. Details cross gRPC as text (google.rpc.ErrorInfo
 * metadata is a string map), so every service's error reaches the gateway with them as text;
 * the envelope gives them back as JSON integers. QUOTA_EXCEEDED's `limit` and `used`,
 * INVALID_ARGUMENT's `limit` (a tree past MAX_TREE_ENTRIES) and EDIT_NOT_APPLICABLE's `edit` are
 * integers by the API's rules.
 */
const INTEGER_DETAILS: Partial<Record<ErrorCode, readonly string[]>> = {
  QUOTA_EXCEEDED: ['limit', 'used'],
  INVALID_ARGUMENT: ['limit'],
  EDIT_NOT_APPLICABLE: ['edit'],
};

/**
 * The details that may be absent, by code: they travel as '' (ErrorInfo metadata is text) and
 * the envelope shows them as null. PRECONDITION_FAILED's `currentSha256` is null when no file
 * is at the path (docs/api/files.md#preconditions).
 */
const NULLABLE_DETAILS: Partial<Record<ErrorCode, readonly string[]>> = {
  PRECONDITION_FAILED: ['currentSha256'],
};

/** Canonical decimal text of a safe integer: `"20"`, not `"020"`, `"2e1"` or `" 20"`. */
const INTEGER_TEXT = /^(?:0|-?[1-9]\d*)$/;

/**
 * The details of `err` for a JSON body: those that are figures as integers, the rest as they
 * are. A figure whose text is not a safe integer stays text rather than being rounded.
 */
export function jsonDetails(err: AppError): JsonDetails | undefined {
  if (!err.details) return undefined;
  const figures = INTEGER_DETAILS[err.code] ?? [];
  const nullable = NULLABLE_DETAILS[err.code] ?? [];
  if (figures.length === 0 && nullable.length === 0) return err.details;
  const out: JsonDetails = { ...err.details };
  for (const key of nullable) if (err.details[key] === '') out[key] = null;
  for (const key of figures) {
    const text = err.details[key];
    if (text === undefined || !INTEGER_TEXT.test(text)) continue;
    const value = Number(text);
    if (Number.isSafeInteger(value)) out[key] = value;
  }
  return out;
}
