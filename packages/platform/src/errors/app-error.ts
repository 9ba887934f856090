import type { ErrorCode } from './codes.js';

/** Error details are flat string maps: they travel as google.rpc.ErrorInfo metadata. */
export type ErrorDetails = Record<string, string>;

/**
 * An error the contract knows. `message` is safe to show a client; `cause` is kept for logs
 * only and never leaves the process.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetails; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

type NotFoundKind = 'project' | 'agent' | 'file' | 'chat' | 'schedule' | 'trigger' | 'revision' | 'config' | 'alias' | 'webhook' | 'link' | 'checkpoint';

const NOT_FOUND_CODES = {
  project: 'PROJECT_NOT_FOUND',
  agent: 'AGENT_NOT_FOUND',
  file: 'FILE_NOT_FOUND',
  chat: 'CHAT_NOT_FOUND',
  schedule: 'SCHEDULE_NOT_FOUND',
  trigger: 'TRIGGER_NOT_FOUND',
  revision: 'REVISION_NOT_FOUND',
  config: 'CONFIG_NOT_FOUND',
  alias: 'ALIAS_NOT_FOUND',
  webhook: 'WEBHOOK_NOT_FOUND',
  link: 'LINK_NOT_FOUND',
  checkpoint: 'CHECKPOINT_NOT_FOUND',
} as const satisfies Record<NotFoundKind, ErrorCode>;

/** Factories: one place that words each error, so services never invent their own. */
export const errors = {
  invalidArgument: (message: string, field?: string) =>
    new AppError('INVALID_ARGUMENT', message, field === undefined ? {} : { details: { field } }),
  invalidPath: (message: string, path?: string) =>
    new AppError('INVALID_PATH', message, path === undefined ? {} : { details: { path } }),
  notFound: (kind: NotFoundKind, id: string) =>
    new AppError(NOT_FOUND_CODES[kind], `${kind} not found: ${id}`),
  unauthenticated: (message = 'authentication required') => new AppError('UNAUTHENTICATED', message),
  projectExists: (name: string) =>
    new AppError('PROJECT_EXISTS', `a project named "${name}" already exists`, { details: { name } }),
  projectArchived: (name: string) =>
    new AppError('PROJECT_ARCHIVED', `project "${name}" is archived`, { details: { name } }),
  staleConfig: (currentConfigId: string) =>
    new AppError('STALE_AGENT_CONFIG', 'the Agent has changed since baseConfigId; reload and retry', {
      details: { currentConfigId },
    }),
  /** A conditional change (`If-Match`) whose condition no longer holds; `currentConfigId` is what is there now. */
  preconditionFailed: (currentConfigId: string) =>
    new AppError('PRECONDITION_FAILED', 'If-Match does not name the current configId; reload and retry', { details: { currentConfigId } }),
  /**
   * A file precondition (docs/api/files.md#preconditions: If-Match, If-None-Match, ifMatchTo) that
   * does not hold; `currentSha256` is the file there now, null when no file is (nothing, or a
   * directory). Details are text across gRPC: null travels as '' and the envelope shows it as null.
   */
  filePreconditionFailed: (currentSha256: string | null) =>
    new AppError('PRECONDITION_FAILED', currentSha256 === null ? 'the precondition failed: no file is at the path' : 'the precondition failed: the file has changed; reload and retry', {
      details: { currentSha256: currentSha256 ?? '' },
    }),
  fileExists: (path: string) =>
    new AppError('FILE_EXISTS', `a file already exists at ${path}; use onConflict=overwrite or uuid`, { details: { path } }),
  pathConflict: (path: string, why: string) => new AppError('PATH_CONFLICT', `${why}: ${path}`, { details: { path } }),
  isADirectory: (path: string) => new AppError('IS_A_DIRECTORY', `${path} is a directory`, { details: { path } }),
  directoryNotEmpty: (path: string) =>
    new AppError('DIRECTORY_NOT_EMPTY', `${path} is a directory that is not empty; use recursive=true`, { details: { path } }),
  fileTooLarge: (path: string, limit: number) =>
    new AppError('FILE_TOO_LARGE', `${path} is larger than the read limit of ${limit} bytes; download it instead`, { details: { path, limit: String(limit) } }),
  fileNotText: (path: string) => new AppError('FILE_NOT_TEXT', `${path} is not valid UTF-8 text; download it instead`, { details: { path } }),
  payloadTooLarge: (limit: number) =>
    new AppError('PAYLOAD_TOO_LARGE', `the upload is larger than the limit of ${limit} bytes`, { details: { limit: String(limit) } }),
  /** A count quota (docs/api/usage.md#quotas): `quota` names its setting, e.g. MAX_AGENTS. Not retryable as is. */
  quotaExceeded: (quota: string, limit: number, used: number) =>
    new AppError('QUOTA_EXCEEDED', `the quota ${quota} of ${limit} is reached; delete something first`, {
      details: { quota, limit: String(limit), used: String(used) },
    }),
  /**
   * An operation on a tree larger than MAX_TREE_ENTRIES (docs/api/files.md#bounded-tree-work):
   * `field` names the request's path argument, `limit` is the bound. Nothing changed.
   */
  treeTooLarge: (path: string, field: string, limit: number) =>
    new AppError('INVALID_ARGUMENT', `the tree at ${path} has more than ${limit} entries (MAX_TREE_ENTRIES), more than one step may touch; take a folder below it`, {
      details: { field, limit: String(limit) },
    }),
  historyExpired: (what: string) => new AppError('HISTORY_EXPIRED', `${what} is older than the retained history (FILE_REVISION_DAYS)`),
  /** A content search over its CPU budget (docs/api/files.md#search): narrowing it is the way on. */
  searchTooExpensive: (budgetMs: number) =>
    new AppError('SEARCH_TOO_EXPENSIVE', `the search passed its budget of ${budgetMs} ms of matching; narrow path or glob, or simplify q`, { details: { budgetMs: String(budgetMs) } }),
  cursorExpired: () => new AppError('CURSOR_EXPIRED', 'the cursor is older than the retained history; list again and take a new cursor'),
  unavailable: (what: string, cause?: unknown) =>
    new AppError('UNAVAILABLE', `${what} is unavailable; retry later`, { cause }),
  internal: (cause?: unknown) => new AppError('INTERNAL', 'internal error', { cause }),
};
