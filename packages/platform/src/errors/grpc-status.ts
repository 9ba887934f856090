import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ErrorInfo } from '@workspace/proto/google/rpc/error_details';
import { Status } from '@workspace/proto/google/rpc/status';
import { AppError, type ErrorDetails } from './app-error.js';
import { grpcStatusOf, isErrorCode } from './codes.js';

const DETAILS_KEY = 'grpc-status-details-bin';
const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const DOMAIN = 'workspace';

/** Encodes an AppError as a gRPC status with google.rpc.Status (ErrorInfo) in the trailers. */
export function toGrpcStatus(err: AppError): Partial<StatusObject> {
  const code = grpcStatusOf(err.code);
  const info = Buffer.from(ErrorInfo.encode({ reason: err.code, domain: DOMAIN, metadata: err.details ?? {} }).finish());
  const rich = Status.encode({
    code,
    message: err.message,
    details: [{ typeUrl: ERROR_INFO_TYPE, value: info }],
  }).finish();
  const metadata = new Metadata();
  metadata.set(DETAILS_KEY, Buffer.from(rich));
  return { code, details: err.message, metadata };
}

function decodeErrorInfo(metadata: Metadata | undefined): { info: ErrorInfo; message: string } | undefined {
  const raw = metadata?.get(DETAILS_KEY)[0];
  if (!Buffer.isBuffer(raw)) return undefined;
  try {
    const rich = Status.decode(raw);
    const any = rich.details.find((d) => d.typeUrl === ERROR_INFO_TYPE);
    return any ? { info: ErrorInfo.decode(any.value), message: rich.message } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Turns what a gRPC call failed with back into an AppError. Our own errors keep code, message
 * and details; transport failures become UNAVAILABLE; anything else is INTERNAL (its text is
 * kept as the cause for logs, never shown).
 */
export function fromGrpcError(err: unknown, service: string): AppError {
  const e = err as Partial<ServiceError>;
  const decoded = decodeErrorInfo(e.metadata);
  if (decoded && decoded.info.domain === DOMAIN && isErrorCode(decoded.info.reason)) {
    const details: ErrorDetails | undefined =
      Object.keys(decoded.info.metadata).length > 0 ? { ...decoded.info.metadata } : undefined;
    return new AppError(decoded.info.reason, decoded.message, details ? { details, cause: err } : { cause: err });
  }
  if (e.code === GrpcStatus.UNAVAILABLE || e.code === GrpcStatus.DEADLINE_EXCEEDED || e.code === GrpcStatus.CANCELLED) {
    return new AppError('UNAVAILABLE', `the ${service} service is unavailable; retry later`, { cause: err });
  }
  return new AppError('INTERNAL', 'internal error', { cause: err });
}
