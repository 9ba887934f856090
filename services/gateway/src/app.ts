import express, { type RequestHandler } from 'express';
import { LRUCache } from 'lru-cache';
import { context, trace } from '@opentelemetry/api';
import { AppError, type RedisClient, SpanKind, SpanStatusCode, tenantKey, traceIdOf, tracer, tracingEnabled, type Logger, type Metrics } from '@workspace/platform';
import { errorHandler, sendError } from './edge/errors.js';
import { requestId } from './edge/request-id.js';
import { corsFor } from './edge/cors.js';
import { compressJson } from './edge/compress.js';
import type { Verifier } from './edge/auth.js';
import { buildOpenApi } from './api/openapi/openapi.js';
import { docsRouter } from './api/openapi/docs.js';
import { API_INFO } from './api/openapi/document.js';
import type { ObjectStore } from './transfer/object-store.js';
import { buildRoutes } from './api/registry.js';
import { mountRoutes, type RouteGuards } from './api/route.js';
import type { LinkOptions } from './features/links/links.routes.js';
import { idempotency } from './edge/limits/idempotency.js';
import type { IdempotencyStore } from './edge/limits/idempotency-store.js';
import { rateLimit, userBucket, type RateLimiter } from './edge/limits/rate-limit.js';
import type { UserSlots } from './edge/limits/user-slots.js';
import { TUS_PATH, tusDiscovery } from './features/files/tus/tus.routes.js';
import type { Clients } from './clients.js';
import { requestIdOf, setUser, userOf } from './edge/request-context.js';
import { mcpRouter } from './features/mcp/mcp.router.js';

export interface GatewayDeps {
  logger: Logger;
  verify: Verifier;
  clients: Clients;
  /** The object store, reached by the presigned URLs the files service hands out. */
  store: ObjectStore;
  /** An upload body that sends nothing for this long fails (UPLOAD_IDLE_TIMEOUT_MS). */
  uploadIdleTimeoutMs: number;
  /** Resolves true when every downstream service (and through them every backend) serves. */
  ready: () => Promise<boolean>;
  trustProxy?: boolean;
  /** When given, every request is counted and timed by route. */
  metrics?: Metrics;
  /** Rate limits, upload slots and idempotency records (docs/api/conventions.md#rate-limits, docs/api/conventions.md#idempotency), in Redis; absent: none apply. */
  limits?: Limits;
  /** Temporary links: their signer and the gateway's public address; absent: one random key for this process. */
  links?: LinkOptions;
  /** Resumable uploads (tus) keep their state in this Redis; absent: not served. */
  tus?: { redis: RedisClient; expiryMs: number; maxBytes: number };
  /** Browser origins allowed to call the API (CORS_ORIGINS); none when absent. */
  corsOrigins?: readonly string[];
  /** The MCP endpoint (docs/api/mcp.md): its sessions' Redis and the authorization servers its metadata names; absent: not served. */
  mcp?: { redis: RedisClient; authorizationServers: readonly string[]; streamStallMs?: number | undefined };
}

export interface Limits {
  rate: RateLimiter;
  uploads: UserSlots;
  searches: UserSlots;
  idempotency: IdempotencyStore;
}

/** The limits as route guards; the user's rate limit runs inside `authenticate` instead. */
function guardsOf(limits: Limits | undefined, logger: Logger): RouteGuards {
  if (!limits) return {};
  return {
    // Unauthenticated routes (the webhook hook) are limited per what they name; the key is hashed to a fixed length.
    rateLimit: (keyOf) => rateLimit(limits.rate, (req) => `key:${tenantKey(keyOf(req))}`),
    idempotency: idempotency({ store: limits.idempotency, logger }),
    slots: { uploads: limits.uploads.guard(), searches: limits.searches.guard() },
  };
}

/**
 * Makes sure each user has Home before their first request is served. Cached per replica: a
 * miss costs one idempotent call, so replicas need not agree on the cache.
 */
function ensureHome(projects: Clients['projects'], logger: Logger): RequestHandler {
  const seen = new LRUCache<string, true>({ max: 100_000 });
  return async (_req, res, next) => {
    const userId = userOf(res);
    if (!seen.has(userId)) {
      try {
        await projects.ensureHome({}, { userId, requestId: requestIdOf(res) });
        seen.set(userId, true);
      } catch (err) {
        logger.warn({ err, requestId: requestIdOf(res) }, 'could not ensure Home; will retry on the next request');
      }
    }
    next();
  };
}

export function createApp(deps: GatewayDeps) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy ?? false);
  const state = { shuttingDown: false };

  const requests = deps.metrics?.counter('http_requests_total', 'HTTP requests, by method, route and status', ['method', 'route', 'status']);
  const latency = deps.metrics?.histogram('http_request_duration_seconds', 'HTTP request latency', ['method', 'route']);
  app.use(requestId);
  // Before anything that can answer, so errors (401, 429, 404) carry CORS headers too.
  if (deps.corsOrigins?.length) app.use(corsFor(deps.corsOrigins));
  app.use(compressJson());
  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Draining: tell keep-alive clients to reconnect (to another replica) after this response.
    if (state.shuttingDown) res.setHeader('Connection', 'close');
    // A server span per request (with tracing on); every gRPC call made while serving it carries its traceparent.
    const span = tracingEnabled()
      ? tracer().startSpan(`HTTP ${req.method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path, 'workspace.request_id': requestIdOf(res) } })
      : undefined;
    const traceId = span && traceIdOf(span);
    if (span) {
      res.once('close', () => {
        const route = (req.route as { path?: string } | undefined)?.path;
        if (route) span.updateName(`HTTP ${req.method} ${route}`);
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
    }
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The route pattern, not the path: bounded label values whatever clients send.
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      requests?.inc({ method: req.method, route, status: res.statusCode });
      latency?.observe({ method: req.method, route }, seconds);
      deps.logger.info({ requestId: requestIdOf(res), traceId, method: req.method, path: req.path, status: res.statusCode, ms: Math.round(seconds * 10_000) / 10 }, 'request');
    });
    if (span) context.with(trace.setSpan(context.active(), span), next);
    else next();
  });

  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    if (!state.shuttingDown && (await deps.ready())) {
      res.json({ status: 'ready' });
      return;
    }
    sendError(res, new AppError('UNAVAILABLE', state.shuttingDown ? 'shutting down' : 'not ready'));
  });

  const authenticate: RequestHandler[] = [
    async (req, res, next) => {
      setUser(res, await deps.verify(req.get('authorization'), requestIdOf(res)));
      next();
    },
    // Before anything costs a backend call: one Redis round trip per request.
    ...(deps.limits ? [rateLimit(deps.limits.rate, (_req, res) => userBucket(userOf(res)))] : []),
    ensureHome(deps.clients.projects, deps.logger),
  ];
  const routes = buildRoutes(deps.clients, { store: deps.store, logger: deps.logger, uploadIdleTimeoutMs: deps.uploadIdleTimeoutMs, links: deps.links, tus: deps.tus });
  const openapi = buildOpenApi(routes, API_INFO);
  app.get('/openapi.json', (_req, res) => void res.json(openapi));
  app.use(docsRouter());
  if (deps.tus) app.options(TUS_PATH, tusDiscovery(deps.tus.maxBytes));
  if (deps.mcp) {
    const { clients, store, logger, corsOrigins = [], links, limits } = deps;
    app.use(mcpRouter({ ...deps.mcp, clients, store, logger, authenticate, corsOrigins, publicUrl: links?.publicUrl, uploads: limits?.uploads, searches: limits?.searches, rate: limits?.rate, idleTimeoutMs: deps.uploadIdleTimeoutMs }));
  }
  app.use(mountRoutes(routes, authenticate, guardsOf(deps.limits, deps.logger)));
  app.use((req, _res, next) => next(new AppError('ROUTE_NOT_FOUND', `no route for ${req.method} ${req.path}`)));
  app.use(errorHandler(deps.logger));

  return {
    app,
    openapi,
    /** The first step of shutdown: /readyz answers 503 from now on. */
    markShuttingDown: () => {
      state.shuttingDown = true;
    },
  };
}
