import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The API's error codes (docs/api/conventions.md#error-codes), one closed union, and the one table
 * that maps each to a gRPC status (between services) and an HTTP status (at the gateway).
 * `satisfies` makes the compiler reject a code without a row and a row without a code.
 */
export const ERROR_TABLE = {
  INVALID_ARGUMENT: { grpc: GrpcStatus.INVALID_ARGUMENT, http: 400 },
  INVALID_PATH: { grpc: GrpcStatus.INVALID_ARGUMENT, http: 400 },
  IS_A_DIRECTORY: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 400 },
  UNAUTHENTICATED: { grpc: GrpcStatus.UNAUTHENTICATED, http: 401 },
  QUOTA_EXCEEDED: { grpc: GrpcStatus.RESOURCE_EXHAUSTED, http: 403 },
  PROJECT_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  AGENT_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  FILE_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  CHAT_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  SCHEDULE_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  TRIGGER_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  REVISION_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  CONFIG_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  ALIAS_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  WEBHOOK_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  LINK_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  CHECKPOINT_NOT_FOUND: { grpc: GrpcStatus.NOT_FOUND, http: 404 },
  ROUTE_NOT_FOUND: { grpc: GrpcStatus.UNIMPLEMENTED, http: 404 },
  METHOD_NOT_ALLOWED: { grpc: GrpcStatus.UNIMPLEMENTED, http: 405 },
  STALE_AGENT_CONFIG: { grpc: GrpcStatus.ABORTED, http: 409 },
  /** `If-Match` on an alias (docs/api/agents.md#aliases) names another config: nothing changed. */
  PRECONDITION_FAILED: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 412 },
  PROJECT_EXISTS: { grpc: GrpcStatus.ALREADY_EXISTS, http: 409 },
  PROJECT_ARCHIVED: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 409 },
  FILE_EXISTS: { grpc: GrpcStatus.ALREADY_EXISTS, http: 409 },
  PATH_CONFLICT: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 409 },
  DIRECTORY_NOT_EMPTY: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 409 },
  /** tus (docs/api/files.md#resumable-uploads): a PATCH whose `Upload-Offset` is not the upload's offset; HEAD tells the right one. */
  UPLOAD_OFFSET_MISMATCH: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 409 },
  PAYLOAD_TOO_LARGE: { grpc: GrpcStatus.RESOURCE_EXHAUSTED, http: 413 },
  FILE_TOO_LARGE: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 413 },
  UNSUPPORTED_MEDIA_TYPE: { grpc: GrpcStatus.INVALID_ARGUMENT, http: 415 },
  /** Node's own refusals, in the envelope: the request's headers did not arrive in time, or are over 16 KiB. */
  REQUEST_TIMEOUT: { grpc: GrpcStatus.DEADLINE_EXCEEDED, http: 408 },
  HEADERS_TOO_LARGE: { grpc: GrpcStatus.INVALID_ARGUMENT, http: 431 },
  FILE_NOT_TEXT: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 422 },
  IDEMPOTENCY_KEY_REUSED: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 422 },
  CURSOR_EXPIRED: { grpc: GrpcStatus.OUT_OF_RANGE, http: 410 },
  /** A rewind or fork (docs/api/files.md) to a time older than the retained history. */
  HISTORY_EXPIRED: { grpc: GrpcStatus.OUT_OF_RANGE, http: 410 },
  /** A content search (docs/api/files.md#search) that passed its CPU budget (SEARCH_BUDGET_MS); `details.budgetMs`. */
  SEARCH_TOO_EXPENSIVE: { grpc: GrpcStatus.RESOURCE_EXHAUSTED, http: 422 },
  /** An MCP `edit_file` edit whose `oldText` is not found exactly once; `details.edit` is its index. */
  EDIT_NOT_APPLICABLE: { grpc: GrpcStatus.FAILED_PRECONDITION, http: 422 },
  /** A request to the MCP endpoint from a browser origin CORS_ORIGINS does not allow (DNS rebinding). */
  ORIGIN_NOT_ALLOWED: { grpc: GrpcStatus.PERMISSION_DENIED, http: 403 },
  RATE_LIMITED: { grpc: GrpcStatus.RESOURCE_EXHAUSTED, http: 429 },
  INTERNAL: { grpc: GrpcStatus.INTERNAL, http: 500 },
  UNAVAILABLE: { grpc: GrpcStatus.UNAVAILABLE, http: 503 },
} as const satisfies Record<string, { grpc: GrpcStatus; http: number }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_TABLE, value);
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_TABLE[code].http;
}

export function grpcStatusOf(code: ErrorCode): GrpcStatus {
  return ERROR_TABLE[code].grpc;
}
