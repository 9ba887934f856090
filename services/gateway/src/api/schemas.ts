import { ERROR_CODES } from '@workspace/platform';
import { z } from 'zod';

/*
 * Query parameters arrive as strings; the document shows them as what they mean (`integer`,
 * `boolean`) so that generated clients take numbers and booleans. `z.preprocess` does both: it
 * turns the exact wire spelling into the typed value and leaves anything else for the typed
 * schema to refuse, and zod's JSON Schema of a preprocess (in `input` mode) is the typed schema.
 */

/** `true` / `false` in a query string (nothing else: not `1`, `yes` or `TRUE`). */
export const booleanQuery = z
  .preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean({ error: 'must be "true" or "false"' }))
  .describe('`true` or `false`');

/** A decimal integer of `min`–`max` in a query string (no sign, no leading zeros, no exponent). */
export function integerQuery(name: string, min: number, max: number) {
  const range = max === Number.MAX_SAFE_INTEGER ? `${name} must be at least ${min}` : `${name} must be ${min}–${max}`;
  return z.preprocess(
    (value) => (typeof value === 'string' && /^(0|[1-9][0-9]*)$/.test(value) ? Number(value) : value),
    z.number({ error: `${name} must be an integer` }).int(`${name} must be an integer`).min(min, range).max(max, range),
  );
}

/**
 * A lone surrogate (`"\ud800"` is valid JSON) cannot travel as UTF-8: gRPC would store U+FFFD
 * in its place and answer 2xx with text the client never sent. Refused instead (400).
 */
export const LONE_SURROGATE = /\p{Cs}/u;

export function wellFormed<T extends z.ZodString>(schema: T): T {
  return schema.refine((value) => !LONE_SURROGATE.test(value), 'must be valid Unicode (no lone surrogates)') as T;
}

/** Whether any string or key in a JSON value holds a lone surrogate (iterative: any depth). */
export function hasLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (LONE_SURROGATE.test(next)) return true;
    } else if (Array.isArray(next)) {
      pending.push(...next);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, member] of Object.entries(next)) pending.push(key, member);
    }
  }
  return false;
}

export const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');

/* Shared by several areas' schemas, so that no area imports another's. */

/** A project's name: projects are created with it, and the export of one is asked for by it. */
export const projectName = wellFormed(z.string().min(1).max(100)).describe('1–100 characters; compared case-insensitively (NFKC + lower case)');

/** A path in the user's workspace: files, their revisions, checkpoints, search, changes and temporary links take one. */
export const workspacePath = wellFormed(z.string()).describe(
    'Absolute workspace path: `/files` or below it. A trailing `/` is dropped. Rejected (400 INVALID_PATH): anything outside `/files`, ' +
      'empty, `.` or `..` segments, backslashes, control characters, a segment over 255 UTF-8 bytes, a path over 900 UTF-8 bytes. Case-sensitive. ' +
    'A lone surrogate (400 INVALID_ARGUMENT) is refused: it cannot travel as UTF-8.',
);

/** `{agentId}` in the path: the agents' routes and the automations (schedules, triggers) of an Agent. */
export const AgentIdParams = z.object({ agentId: z.string().describe('`agt_` + 32 lowercase hex') }).strict();

const int = () => z.number().int();
const path = () => z.string().describe('The workspace path concerned');

/**
 * The `details` of the codes that have them, by code (docs/api/conventions.md#error-codes), so a
 * typed client narrows `error.details` by `error.code` (`details.currentConfigId` of a
 * STALE_AGENT_CONFIG needs no cast). Every figure is a whole number; other codes carry at most
 * text or figures under names of their own.
 */
const DETAILS_BY_CODE = {
  INVALID_ARGUMENT: { field: z.string().optional(), limit: int().optional().describe('The bound a tree passed (MAX_TREE_ENTRIES)') },
  INVALID_PATH: { path: path().optional() },
  IS_A_DIRECTORY: { path: path() },
  QUOTA_EXCEEDED: { quota: z.string().describe('The setting: MAX_AGENTS, FILE_QUOTA_BYTES, MAX_FILES …'), limit: int(), used: int() },
  STALE_AGENT_CONFIG: { currentConfigId: z.string() },
  PRECONDITION_FAILED: { currentConfigId: z.string().optional(), currentSha256: z.string().nullable().optional().describe('null when no file is at the path') },
  PROJECT_EXISTS: { name: z.string() },
  PROJECT_ARCHIVED: { name: z.string() },
  FILE_EXISTS: { path: path() },
  PATH_CONFLICT: { path: path() },
  DIRECTORY_NOT_EMPTY: { path: path() },
  PAYLOAD_TOO_LARGE: { limit: int().optional() },
  FILE_TOO_LARGE: { path: path(), limit: int() },
  FILE_NOT_TEXT: { path: path() },
  EDIT_NOT_APPLICABLE: { edit: int().describe('The 0-based index of the edit') },
  SEARCH_TOO_EXPENSIVE: { budgetMs: int() },
  RATE_LIMITED: { limit: int().optional(), retryAfter: int().optional() },
} satisfies Partial<Record<(typeof ERROR_CODES)[number], z.ZodRawShape>>;

const envelope = (code: z.ZodType, details: z.ZodType) => z.object({ code, message: z.string(), requestId: z.string(), details });
const detailed = Object.keys(DETAILS_BY_CODE) as (keyof typeof DETAILS_BY_CODE)[];
const others = ERROR_CODES.filter((c) => !(detailed as string[]).includes(c));

export const ErrorEnvelope = z
  .object({
    error: z.union([
      ...detailed.map((code) => envelope(z.literal(code), z.object(DETAILS_BY_CODE[code]).optional())),
      envelope(z.enum(others as [string, ...string[]]), z.record(z.string(), z.union([z.string(), int(), z.null()])).optional()),
    ]),
  })
  .describe('The error envelope: `details` has the shape its `code` gives it (text, or whole numbers for figures)')
  .meta({ id: 'Error' });
