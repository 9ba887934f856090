import { AppError, errors } from '@workspace/platform';

/** S3 error codes that mean "there is no such object". */
const NOT_FOUND = new Set(['NotFound', 'NoSuchKey', 'NoSuchObject']);

/** Network-level failures: the store is unreachable or went away mid-call. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'UND_ERR_SOCKET']);

type S3Failure = { code?: string; statusCode?: number; cause?: { code?: string } };

export function isNotFound(err: unknown): boolean {
  const e = err as S3Failure;
  return NOT_FOUND.has(e.code ?? '') || e.statusCode === 404;
}

/**
 * What a failed store call means to a client: our own errors pass through; an unreachable or
 * overloaded store is UNAVAILABLE (503, retry); anything else is a bug, INTERNAL (its text is
 * kept as the cause for the log, never shown).
 */
export function storeError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as S3Failure;
  const status = e.statusCode ?? 0;
  if (NETWORK.has(e.code ?? '') || NETWORK.has(e.cause?.code ?? '') || status >= 500 || e.code === 'SlowDown') {
    return errors.unavailable('file storage', err);
  }
  return errors.internal(err);
}

/** Runs a store call and translates its failure. */
export async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw storeError(err);
  }
}
