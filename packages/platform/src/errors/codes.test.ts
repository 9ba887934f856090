import { Metadata, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { AppError } from './app-error.js';
import { ERROR_CODES, ERROR_TABLE, httpStatusOf } from './codes.js';
import { fromGrpcError, toGrpcStatus } from './grpc-status.js';

/** The statuses of the code table in docs/api/conventions.md#error-codes, written out again. */
const DOCUMENTED_HTTP: Record<string, number> = {
  INVALID_ARGUMENT: 400, INVALID_PATH: 400, IS_A_DIRECTORY: 400, UNAUTHENTICATED: 401, QUOTA_EXCEEDED: 403,
  PROJECT_NOT_FOUND: 404, AGENT_NOT_FOUND: 404, FILE_NOT_FOUND: 404, CHAT_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404, TRIGGER_NOT_FOUND: 404, REVISION_NOT_FOUND: 404, CONFIG_NOT_FOUND: 404, ALIAS_NOT_FOUND: 404, WEBHOOK_NOT_FOUND: 404, LINK_NOT_FOUND: 404, CHECKPOINT_NOT_FOUND: 404, HISTORY_EXPIRED: 410, EDIT_NOT_APPLICABLE: 422, SEARCH_TOO_EXPENSIVE: 422, ORIGIN_NOT_ALLOWED: 403, PRECONDITION_FAILED: 412, UPLOAD_OFFSET_MISMATCH: 409, METHOD_NOT_ALLOWED: 405, ROUTE_NOT_FOUND: 404,
  STALE_AGENT_CONFIG: 409, PROJECT_EXISTS: 409, PROJECT_ARCHIVED: 409, FILE_EXISTS: 409,
  PATH_CONFLICT: 409, DIRECTORY_NOT_EMPTY: 409, PAYLOAD_TOO_LARGE: 413, FILE_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415, REQUEST_TIMEOUT: 408, HEADERS_TOO_LARGE: 431, FILE_NOT_TEXT: 422, IDEMPOTENCY_KEY_REUSED: 422, CURSOR_EXPIRED: 410, RATE_LIMITED: 429, INTERNAL: 500, UNAVAILABLE: 503,
};

describe('errors', () => {
  it('errors — the table holds exactly the documented codes with the documented HTTP statuses', () => {
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(DOCUMENTED_HTTP).sort());
    for (const code of ERROR_CODES) expect(httpStatusOf(code), code).toBe(DOCUMENTED_HTTP[code]);
  });

  it.each(ERROR_CODES)('errors — %s survives gRPC status + google.rpc.Status details', (code) => {
    const original = new AppError(code, `message for ${code}`, { details: { field: 'a[0].b', currentConfigId: 'cfg_x' } });
    const grpcStatus = toGrpcStatus(original);
    expect(grpcStatus.code).toBe(ERROR_TABLE[code].grpc);
    const decoded = fromGrpcError({ code: grpcStatus.code, details: grpcStatus.details, metadata: grpcStatus.metadata }, 'test');
    expect(decoded.code).toBe(code);
    expect(decoded.message).toBe(original.message);
    expect(decoded.details).toEqual(original.details);
    expect(httpStatusOf(decoded.code)).toBe(DOCUMENTED_HTTP[code]);
  });

  it('errors — transport failures become UNAVAILABLE, foreign errors INTERNAL without their text', () => {
    expect(fromGrpcError({ code: status.UNAVAILABLE, details: 'connect ECONNREFUSED 10.0.0.7:50051' }, 'projects').code).toBe('UNAVAILABLE');
    expect(fromGrpcError({ code: status.DEADLINE_EXCEEDED }, 'projects').message).not.toMatch(/10\.0\.0\.7/);
    const foreign = fromGrpcError({ code: status.UNKNOWN, details: 'TypeError: x is undefined', metadata: new Metadata() }, 'projects');
    expect(foreign.code).toBe('INTERNAL');
    expect(foreign.message).toBe('internal error');
    const garbage = new Metadata();
    garbage.set('grpc-status-details-bin', Buffer.from('not a protobuf'));
    expect(fromGrpcError({ code: status.NOT_FOUND, metadata: garbage }, 'projects').code).toBe('INTERNAL');
  });
});
