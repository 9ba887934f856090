import { describe, expect, it } from 'vitest';
import { AppError, errors } from './app-error.js';
import { fromGrpcError, toGrpcStatus } from './grpc-status.js';
import { jsonDetails } from './json-details.js';

/** What the gateway gets back from a service: the error after a trip through gRPC. */
const overGrpc = (err: AppError) => {
  const s = toGrpcStatus(err);
  return fromGrpcError({ code: s.code, details: s.details, metadata: s.metadata }, 'test');
};

describe('errors — details as the JSON envelope shows them', () => {
  it.each(['MAX_AGENTS', 'MAX_ALIASES_PER_AGENT', 'MAX_SCHEDULES_PER_AGENT', 'MAX_TRIGGERS_PER_AGENT', 'MAX_WEBHOOKS', 'FILE_QUOTA_BYTES', 'MAX_FILES'])(
    'json details — QUOTA_EXCEEDED (%s) gives limit and used as JSON integers, in process and after gRPC',
    (quota) => {
      const err = errors.quotaExceeded(quota, 10_737_418_240, 20);
      for (const e of [err, overGrpc(err)]) {
        expect(jsonDetails(e)).toEqual({ quota, limit: 10_737_418_240, used: 20 });
        expect(JSON.stringify(jsonDetails(e))).toBe(`{"quota":"${quota}","limit":10737418240,"used":20}`);
      }
    },
  );

  it('json details — every figure is a JSON number whatever the code: FILE_TOO_LARGE and PAYLOAD_TOO_LARGE limit, RATE_LIMITED limit and retryAfter, SEARCH_TOO_EXPENSIVE budgetMs, a bound\'s limit', () => {
    for (const [err, want] of [
      [errors.fileTooLarge('/files/a', 10_485_760), { path: '/files/a', limit: 10_485_760 }],
      [errors.payloadTooLarge(1024), { limit: 1024 }],
      [new AppError('RATE_LIMITED', 'm', { details: { limit: '2', retryAfter: '1' } }), { limit: 2, retryAfter: 1 }],
      [errors.searchTooExpensive(10_000), { budgetMs: 10_000 }],
      [new AppError('INVALID_ARGUMENT', 'm', { details: { field: 'from', limit: '10000' } }), { field: 'from', limit: 10_000 }],
    ] as const) {
      for (const e of [err, overGrpc(err)]) expect(jsonDetails(e)).toEqual(want);
    }
  });

  it('json details — INVALID_ARGUMENT of a tree past MAX_TREE_ENTRIES gives field as text and limit as a JSON integer, in process and after gRPC', () => {
    const err = errors.treeTooLarge('/files/big', 'from', 25_000);
    for (const e of [err, overGrpc(err)]) {
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(JSON.stringify(jsonDetails(e))).toBe('{"field":"from","limit":25000}');
    }
    // Other INVALID_ARGUMENTs keep their text details.
    expect(jsonDetails(overGrpc(errors.invalidArgument('limit must be 1 to 10000', 'limit')))).toEqual({ field: 'limit' });
  });

  it('json details — a figure that is not a whole number stays text; other codes and keys are left as they are', () => {
    expect(jsonDetails(new AppError('QUOTA_EXCEEDED', 'm', { details: { quota: 'X', limit: '1e3', used: ' 7' } }))).toEqual({ quota: 'X', limit: '1e3', used: ' 7' });
    expect(jsonDetails(new AppError('QUOTA_EXCEEDED', 'm', { details: { quota: 'X', limit: '007', used: '99999999999999999999' } }))).toEqual({ quota: 'X', limit: '007', used: '99999999999999999999' });
    expect(jsonDetails(new AppError('FILE_EXISTS', 'm', { details: { path: '12' } }))).toEqual({ path: '12' });
    expect(jsonDetails(new AppError('PROJECT_EXISTS', 'm', { details: { name: '2024' } }))).toEqual({ name: '2024' });
    expect(jsonDetails(new AppError('QUOTA_EXCEEDED', 'm'))).toBeUndefined();
  });

  it('json details — PRECONDITION_FAILED of a file: currentSha256 is the sha256, or JSON null when no file is there, after gRPC too', () => {
    const sha = 'a'.repeat(64);
    for (const e of [errors.filePreconditionFailed(sha), overGrpc(errors.filePreconditionFailed(sha))]) {
      expect(e.code).toBe('PRECONDITION_FAILED');
      expect(jsonDetails(e)).toEqual({ currentSha256: sha });
    }
    for (const e of [errors.filePreconditionFailed(null), overGrpc(errors.filePreconditionFailed(null))]) {
      expect(e.code).toBe('PRECONDITION_FAILED');
      expect(JSON.stringify(jsonDetails(e))).toBe('{"currentSha256":null}');
    }
    // An alias's precondition keeps its text details.
    expect(jsonDetails(overGrpc(errors.preconditionFailed('cfg_1')))).toEqual({ currentConfigId: 'cfg_1' });
  });
});
