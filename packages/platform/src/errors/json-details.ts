import type { AppError } from './app-error.js';
import type { ErrorCode } from './codes.js';

/** An error's details as the HTTP envelope shows them: text, whole numbers where a detail is a figure, null where one is absent. */
export type JsonDetails = Record<string, string | number | null>;

/**
 * The details that are figures, by name, whatever the code: they cross gRPC as text
 * (google.rpc.ErrorInfo metadata is a string map), so every service's error reaches the gateway
 * with them as text, and the envelope gives them back as JSON integers (docs/api/conventions.md:
 * every number in `details` is a JSON number) — a quota's or a bound's `limit` and `used`,
 * RATE_LIMITED's `retryAfter`, SEARCH_TOO_EXPENSIVE's `budgetMs`, EDIT_NOT_APPLICABLE's `edit`.
 * No other detail is a figure (a `name` or a `path` that looks like one stays text).
 */
const INTEGER_DETAILS: readonly string[] = ['limit', 'used', 'retryAfter', 'budgetMs', 'edit'];

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
  const nullable = NULLABLE_DETAILS[err.code] ?? [];
  const out: JsonDetails = { ...err.details };
  for (const key of nullable) if (err.details[key] === '') out[key] = null;
  for (const key of INTEGER_DETAILS) {
    const text = err.details[key];
    if (text === undefined || !INTEGER_TEXT.test(text)) continue;
    const value = Number(text);
    if (Number.isSafeInteger(value)) out[key] = value;
  }
  return out;
}
