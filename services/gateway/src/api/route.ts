import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError, type ErrorCode, type OutgoingContext } from '@workspace/platform';
import type { z } from 'zod';
import { clientWentAway } from '../edge/client-gone.js';
import { jsonBody } from '../edge/json-body.js';
import { checkQueryUtf8 } from '../edge/strict-utf8.js';
import { parseWith } from './validate.js';
import { idempotencyKeyOf, maybeUserOf, requestIdOf } from '../edge/request-context.js';
import type { SlotKind } from '../edge/limits/user-slots.js';

export type Method = 'get' | 'head' | 'post' | 'patch' | 'put' | 'delete';

export interface ResponseDoc {
  description: string;
  /** JSON body schema; omit for an empty body. */
  schema?: z.ZodType;
  /** A non-JSON body (a download): its media type. */
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * A request header a route reads, declared in the document (the handler parses it itself).
 * Common ones are in request-headers.ts; a route adds its own (tus's `Upload-*`) the same way.
 */
export interface HeaderParam {
  name: string;
  description: string;
  required?: boolean;
  schema: z.ZodType;
  example?: string;
}

/**
 * The route's example in the document: a request (path and query parameters as the document
 * types them, the body) and its success answer. A unit test holds every operation to one.
 */
export interface RouteExample<P = unknown, Q = unknown, B = unknown> {
  params?: P;
  query?: Partial<Q>;
  body?: B;
  /** The body of the first 2xx answer that has a JSON schema. */
  response?: unknown;
}

/** What a handler gets: validated input and the identity to pass to services. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Forward to every gRPC call: user, request id, and cancellation when the client leaves. */
  call: OutgoingContext & { userId: string; requestId: string };
  /**
   * On an `idempotent` route sent with an Idempotency-Key: a key derived from it, for services
   * that dedupe by themselves (so a create retried after a lost answer makes one resource).
   */
  idempotencyKey?: string | undefined;
  req: Request;
}

export interface RouteDef<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: Method;
  /** OpenAPI-style path: `/v1/agents/{agentId}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Routes are authenticated unless this is false. */
  auth?: boolean;
  /**
   * A creating POST that honours `Idempotency-Key` (docs/api/conventions.md#idempotency): a repeat
   * with the same key, method, path and body within 24 h gets the first response and creates
   * nothing.
   */
  idempotent?: boolean;
  /**
   * A request that holds one of the user's slots of a kind while it runs: an upload
   * (MAX_CONCURRENT_UPLOADS), a search (MAX_SEARCHES_PER_USER).
   */
  slot?: SlotKind;
  /**
   * For a route without a user: the rate-limit budget a request draws from (e.g. per webhook
   * trigger). Authenticated routes draw from their user's.
   */
  rateLimitKey?: (req: Request) => string;
  params?: P;
  query?: Q;
  /** A JSON body, validated; omitted for routes without one. */
  body?: B;
  /**
   * Documented non-JSON request body (multipart uploads); the handler reads the stream itself.
   * `description` states its size limit (JSON bodies' 1 MiB is stated for them).
   */
  rawBody?: { contentType: string; schema: z.ZodType; description: string };
  /** Request headers the route reads, for the document (Idempotency-Key comes with `idempotent`). */
  requestHeaders?: HeaderParam[];
  example?: RouteExample<z.input<P>, z.output<Q>, z.input<B>>;
  responses: Record<number, ResponseDoc>;
  /** The error codes this route can answer with, for the document. */
  errors: ErrorCode[];
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>, res: Response) => Promise<void>;
}

/** Keeps the types of one route's schemas tied to its handler. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef;
}

export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** The limits (docs/api/conventions.md#rate-limits, docs/api/conventions.md#idempotency) routes opt into; without them (unit tests) nothing is limited. */
export interface RouteGuards {
  /** Draws a request from the budget `keyOf` names (routes with `rateLimitKey`). */
  rateLimit?: (keyOf: (req: Request) => string) => RequestHandler;
  /** For `idempotent` routes, after the body is parsed. */
  idempotency?: RequestHandler;
  /** For routes with a `slot`, by its kind. */
  slots?: Record<SlotKind, RequestHandler>;
}

/**
 * Mounts the routes, then answers every other method on a known path with 405 and `Allow`.
 * `authenticate` runs only on routes that need it, after the route matched, so unknown routes
 * are 404 and wrong methods 405 whether or not a token came with them.
 */
export function mountRoutes(routes: RouteDef[], authenticate: RequestHandler[], guards: RouteGuards = {}): Router {
  const router = Router();
  const allowed = new Map<string, Set<string>>();
  for (const route of routes) {
    const chain: RequestHandler[] = [];
    if (route.auth !== false) chain.push(...authenticate);
    if (route.rateLimitKey && guards.rateLimit) chain.push(guards.rateLimit(route.rateLimitKey));
    if (route.body) chain.push(jsonBody);
    if (route.idempotent && guards.idempotency) chain.push(guards.idempotency);
    if (route.slot && guards.slots) chain.push(guards.slots[route.slot]);
    chain.push(async (req, res) => {
      const rawQuery = req.originalUrl.indexOf('?');
      const notUtf8 = rawQuery < 0 ? undefined : checkQueryUtf8(req.originalUrl.slice(rawQuery + 1));
      if (notUtf8) throw notUtf8;
      const input: RouteInput<unknown, unknown, unknown> = {
        params: route.params ? parseWith(route.params, req.params, 'path') : req.params,
        query: route.query ? parseWith(route.query, { ...(req.query as object) }, 'query') : {},
        body: route.body ? parseWith(route.body, req.body, 'body') : undefined,
        call: { userId: maybeUserOf(res) ?? '', requestId: requestIdOf(res), signal: abortOnClose(res) },
        idempotencyKey: idempotencyKeyOf(res),
        req,
      };
      await route.handler(input as never, res);
    });
    router[route.method](expressPath(route.path), ...chain);
    const methods = allowed.get(route.path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
    allowed.set(route.path, methods);
  }
  for (const [path, methods] of allowed) {
    const allow = [...methods].sort().join(', ');
    router.all(expressPath(path), (req, res, next) => {
      res.setHeader('Allow', allow);
      next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; allowed: ${allow}`));
    });
  }
  return router;
}

/** An AbortSignal that fires when the client goes away before the response is finished. */
function abortOnClose(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(clientWentAway());
  });
  return controller.signal;
}
