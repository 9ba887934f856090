import type { Response } from 'express';
import { errors } from '@workspace/platform';

/**
 * What the edge learns about a request as it passes, kept on the response (`res.locals`) and
 * read only through these functions, so that no handler casts: its id (set first, by
 * request-id.ts), the user (set by authentication), and the key an Idempotency-Key derives.
 */
interface Context {
  requestId?: string;
  userId?: string;
  idempotencyKey?: string;
}

const of = (res: Response): Context => res.locals as Context;

/** The request's id (every request has one before anything else runs). */
export function requestIdOf(res: Response): string {
  return of(res).requestId ?? '';
}

/** The authenticated user; a route that needs one and has none is a bug of the route table. */
export function userOf(res: Response): string {
  const userId = of(res).userId;
  if (userId === undefined) throw errors.internal(new Error('no authenticated user on this request'));
  return userId;
}

/** The user, on routes that may have none (the webhook hook). */
export function maybeUserOf(res: Response): string | undefined {
  return of(res).userId;
}

export function setRequestId(res: Response, requestId: string): void {
  of(res).requestId = requestId;
}

export function setUser(res: Response, userId: string): void {
  of(res).userId = userId;
}

/** The key an Idempotency-Key derives, for services that dedupe by themselves. */
export function idempotencyKeyOf(res: Response): string | undefined {
  return of(res).idempotencyKey;
}

export function setIdempotencyKey(res: Response, key: string): void {
  of(res).idempotencyKey = key;
}
