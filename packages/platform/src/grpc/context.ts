import type { Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { errors } from '../errors/app-error.js';

/** Metadata keys set by the gateway (and by services calling each other). */
export const MD_REQUEST_ID = 'x-request-id';
/**
 * The user id as binary metadata: its UTF-8 bytes, base64 on the wire. A `sub` may hold any
 * character (`josé`, `用户`, surrounding spaces), which ASCII metadata cannot carry unchanged.
 */
export const MD_USER_ID = 'x-user-id-bin';

/** What a handler knows about the call it serves. */
export interface CallContext {
  /** The verified user, from `x-user-id-bin`; undefined for calls not made for a user. */
  readonly userId: string | undefined;
  readonly requestId: string;
  /** A child logger carrying requestId and method. */
  readonly logger: Logger;
  /** Aborted when the caller cancels or the deadline passes. */
  readonly signal: AbortSignal;
  readonly metadata: Metadata;
}

/** The user a call is made for; a call without one is refused. */
export function requireUser(ctx: CallContext): string {
  if (!ctx.userId) throw errors.unauthenticated('call carries no user');
  return ctx.userId;
}

/** What a client passes along: the caller's identity, request id, deadline and cancellation. */
export interface OutgoingContext {
  userId?: string | undefined;
  requestId?: string | undefined;
  /** Overrides the client's default deadline for this call. */
  deadlineMs?: number;
  signal?: AbortSignal | undefined;
}

/** Forwards the identity of an incoming call to an outgoing one. */
export function forward(ctx: CallContext): OutgoingContext {
  return { userId: ctx.userId, requestId: ctx.requestId, signal: ctx.signal };
}
