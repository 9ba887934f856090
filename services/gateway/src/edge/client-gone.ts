import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Response } from 'express';
import { AppError } from '@workspace/platform';

/** The cause of every `clientWentAway()` error: how the error handler tells them from real failures. */
const CLIENT_LEFT = new Error('the client closed the connection before its answer');

/** The error a request's work ends with when its client has gone away: nobody is left to answer. */
export function clientWentAway(): AppError {
  return new AppError('UNAVAILABLE', 'client went away', { cause: CLIENT_LEFT });
}

/** The client closed the connection before its response was finished. */
export function clientLeft(res: Response): boolean {
  return res.destroyed && !res.writableFinished;
}

/**
 * The failure is only the cancellation of the request's work: `clientWentAway()`, an abort
 * (AbortError), or a gRPC call this side cancelled (CANCELLED), anywhere in the cause chain. A
 * backend that failed on its own is none of these.
 */
export function isCancellation(err: unknown): boolean {
  let e = err;
  for (let depth = 0; depth < 8 && typeof e === 'object' && e !== null; depth++) {
    if (e === CLIENT_LEFT || (e as { name?: unknown }).name === 'AbortError' || (e as { code?: unknown }).code === GrpcStatus.CANCELLED) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
