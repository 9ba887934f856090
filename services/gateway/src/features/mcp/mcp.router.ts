import type { IncomingMessage } from 'node:http';
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { AppError, isAppError, type Logger, type RedisClient } from '@workspace/platform';
import type { Clients } from '../../clients.js';
import { hasLoneSurrogate } from '../../api/schemas.js';
import { JsonTextGuard } from '../../edge/json-guard.js';
import { requestIdOf, userOf } from '../../edge/request-context.js';
import { applyDecision, userBucket, type RateLimiter } from '../../edge/limits/rate-limit.js';
import type { UserSlots } from '../../edge/limits/user-slots.js';
import { IdleTimer } from '../../transfer/idle-timer.js';
import type { ObjectStore } from '../../transfer/object-store.js';
import { buildServer } from './mcp-server.js';
import { SessionStore, type McpSession } from './sessions.redis.js';
import type { ToolContext } from './tools/tool.js';
import { NOT_OURS, resumeFrom, serveUpdates } from './updates-stream.js';

export const MCP_PATH = '/v1/mcp';
const METADATA_PATH = '/.well-known/oauth-protected-resource';
/** A JSON-RPC message may carry a whole file for write_file; the upload limit applies to the file itself. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/**
 * The client's name and capabilities are kept with the session and read back by every request
 * of it: a client may not make that record (in Redis, for a day) as large as a message.
 */
const MAX_CLIENT_FACTS = 64 * 1024;

export interface McpDeps {
  clients: Clients;
  store: ObjectStore;
  logger: Logger;
  redis: RedisClient;
  /** The app's authentication chain: the token, the user's rate limit, Home. */
  authenticate: RequestHandler[];
  uploads?: UserSlots | undefined;
  searches?: UserSlots | undefined;
  /** The user's rate limit, which a batch draws from once more for each request beyond the first; absent: none applies. */
  rate?: RateLimiter | undefined;
  /** A message body that sends nothing for this long is cut (UPLOAD_IDLE_TIMEOUT_MS, as an upload's); unset: 30 s. */
  idleTimeoutMs?: number | undefined;
  /** PUBLIC_URL; unset: the scheme and host each request came to. */
  publicUrl?: string | undefined;
  /** MCP_AUTHORIZATION_SERVERS, else AUTH_ISSUER. */
  authorizationServers: readonly string[];
  /** CORS_ORIGINS: the only browser origins allowed to call the endpoint. */
  corsOrigins: readonly string[];
  /** MCP_STREAM_STALL_MS: a GET stream whose socket takes nothing for this long is closed; unset: 30 s. */
  streamStallMs?: number | undefined;
}

function baseUrl(req: Request, publicUrl: string | undefined): string {
  return (publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`).replace(/\/+$/, '');
}

/** A transport-level refusal as the Streamable HTTP transport words it: a JSON-RPC error body. */
function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * The workspace over MCP (docs/api/mcp.md): the Streamable HTTP transport at /v1/mcp with its
 * sessions in Redis, and the protected-resource metadata that tells clients where tokens come from.
 */
export function mcpRouter(deps: McpDeps): Router {
  const router = Router();
  const sessions = new SessionStore(deps.redis);
  const allowedOrigins = new Set(deps.corsOrigins.map((o) => o.replace(/\/+$/, '')));

  const metadata: RequestHandler = (req, res) => {
    const base = baseUrl(req, deps.publicUrl);
    res.json({ resource: `${base}${MCP_PATH}`, authorization_servers: deps.authorizationServers, bearer_methods_supported: ['header'], resource_name: 'Workspace MCP' });
  };
  router.get(METADATA_PATH, metadata);
  router.get(`${METADATA_PATH}${MCP_PATH}`, metadata);

  const checkOrigin: RequestHandler = (req, _res, next) => {
    const origin = req.get('origin');
    if (origin !== undefined && !allowedOrigins.has(origin)) throw new AppError('ORIGIN_NOT_ALLOWED', `requests from origin ${origin.slice(0, 200)} are not allowed`);
    next();
  };
  // The challenge points at the metadata document (RFC 9728), with the error when a token was sent.
  const challenge: ErrorRequestHandler = (err, req, res, next) => {
    if (isAppError(err) && err.code === 'UNAUTHENTICATED') {
      const meta = `resource_metadata="${baseUrl(req, deps.publicUrl)}${METADATA_PATH}"`;
      const sent = req.get('authorization') !== undefined;
      res.setHeader('WWW-Authenticate', sent ? `Bearer ${meta}, error="invalid_token"` : `Bearer ${meta}`);
    }
    next(err);
  };

  const toolContext = (req: Request, res: Response): ToolContext => ({
    files: deps.clients.files,
    projects: deps.clients.projects,
    store: deps.store,
    logger: deps.logger,
    uploads: deps.uploads,
    searches: deps.searches,
    call: { userId: userOf(res), requestId: requestIdOf(res) },
  });

  /** The session the request names; a missing header → 400, unknown, ended or another user's → 404. */
  const sessionOf = async (req: Request, res: Response): Promise<McpSession | undefined> => {
    const id = req.get('mcp-session-id');
    if (!id) {
      rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const session = await sessions.get(id, userOf(res));
    if (!session) rpcError(res, 404, -32001, 'Session not found');
    return session;
  };

  const post: RequestHandler = async (req, res) => {
    const accept = req.get('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return rpcError(res, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!req.is('application/json') || !isUtf8Charset(req.get('content-type') ?? '')) {
      return rpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json (UTF-8)');
    }
    const body = await readJson(req, deps.idleTimeoutMs ?? DEFAULT_IDLE_MS);
    // A body that stalled was cut: its socket is gone, nothing is left to answer.
    if (body === STALLED) return;
    // A body refused before its end was left unread: the connection cannot carry another request.
    if (body === TOO_LARGE || body === TOO_MANY_VALUES || body instanceof Refused) res.setHeader('Connection', 'close');
    if (body === TOO_LARGE) return rpcError(res, 413, -32000, `Payload Too Large: a message may have at most ${MAX_BODY_BYTES} bytes`);
    if (body === TOO_MANY_VALUES) return rpcError(res, 413, -32000, `Payload Too Large: a message may hold at most ${MAX_PARSED_BYTES / (1024 * 1024)} MiB of values once parsed`);
    if (body === MALFORMED) return rpcError(res, 400, -32700, 'Parse error: Invalid JSON');
    if (body instanceof Refused) return rpcError(res, 400, -32700, `Parse error: ${body.message}`);
    const messages = Array.isArray(body) ? body : [body];
    // Only a well-formed initialize request opens a session, and only alone: one the transport
    // would refuse (in a batch, even of one; without an id or `jsonrpc`) must not leave a
    // session behind.
    const init = messages.find((m) => isInitializeRequest(m));
    if (init && (Array.isArray(body) || !isJSONRPCRequest(init))) return rpcError(res, 400, -32600, 'Invalid Request: initialize must be a JSON-RPC request sent alone');
    // One that is not an initialize request would reach the SDK's own handler, which answers bad params as an internal error.
    if (!init && messages.some((m) => (m as { method?: unknown } | null)?.method === 'initialize')) {
      return rpcError(res, 400, -32602, 'Invalid params: initialize needs protocolVersion, capabilities and clientInfo (name, version)');
    }
    if (init && JSON.stringify([init.params.clientInfo, init.params.capabilities]).length > MAX_CLIENT_FACTS) {
      return rpcError(res, 400, -32602, `Invalid params: clientInfo and capabilities may take at most ${MAX_CLIENT_FACTS / 1024} KiB as JSON`);
    }
    // Authentication drew one request from the user's rate limit: a batch is as many as it holds,
    // else 100 tool calls would cost one (every tool call draws from it, as an HTTP request does).
    const beyondFirst = messages.filter((m) => isJSONRPCRequest(m)).length - 1;
    if (beyondFirst > 0 && deps.rate) applyDecision(res, await deps.rate.consume(userBucket(userOf(res)), beyondFirst));
    const ctx = toolContext(req, res);
    let session: McpSession | undefined;
    if (init) {
      const requested = init.params.protocolVersion;
      session = await sessions.create({
        userId: ctx.call.userId,
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
        clientInfo: init.params.clientInfo,
        capabilities: init.params.capabilities,
      });
      res.setHeader('Mcp-Session-Id', session.id);
    } else {
      session = await sessionOf(req, res);
      if (!session) return;
      res.setHeader('Mcp-Session-Id', session.id);
    }
    const startCursor = async () => (await deps.clients.files.getChangesCursor({ path: '/files' }, ctx.call)).cursor;
    const server = buildServer({ tool: ctx, sessions, session, startCursor });
    // Every request is answered by one JSON body, not an SSE stream: no tool sends anything
    // before its result, and a stream costs both sides framing and parsing per call. Server-
    // initiated messages go on the session's GET stream.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req as IncomingMessage, res, body);
  };

  const get: RequestHandler = async (req, res) => {
    if (!(req.get('accept') ?? '').includes('text/event-stream')) return rpcError(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    const session = await sessionOf(req, res);
    if (!session) return;
    const resume = resumeFrom(req.get('last-event-id'), session.id);
    if (resume === NOT_OURS) return rpcError(res, 400, -32000, "Bad Request: Last-Event-ID is not the id of an event of this session's stream");
    const streamDeps = { files: deps.clients.files, sessions, logger: deps.logger, stallMs: deps.streamStallMs ?? DEFAULT_STALL_MS };
    await serveUpdates(streamDeps, res, { sessionId: session.id, userId: session.userId, requestId: requestIdOf(res), protocolVersion: session.protocolVersion }, resume);
  };

  const del: RequestHandler = async (req, res) => {
    const session = await sessionOf(req, res);
    if (!session) return;
    await sessions.end(session);
    res.status(200).end();
  };

  const notAllowed: RequestHandler = (_req, res) => {
    res.setHeader('Allow', 'GET, POST, DELETE');
    throw new AppError('METHOD_NOT_ALLOWED', 'the MCP endpoint takes POST, GET and DELETE');
  };

  router.post(MCP_PATH, checkOrigin, ...deps.authenticate, post);
  router.get(MCP_PATH, checkOrigin, ...deps.authenticate, get);
  router.delete(MCP_PATH, checkOrigin, ...deps.authenticate, del);
  router.all(MCP_PATH, notAllowed);
  router.use(MCP_PATH, challenge);
  return router;
}

const TOO_LARGE = Symbol('too large');
const TOO_MANY_VALUES = Symbol('too many values');
const MALFORMED = Symbol('malformed');
const STALLED = Symbol('stalled');
const DEFAULT_IDLE_MS = 30_000;
const DEFAULT_STALL_MS = 30_000;
/**
 * What a body may take once parsed (JsonTextGuard's estimate): a whole file's content as one
 * string fits (about twice its bytes), millions of tiny values (`[],` takes ~25 times its
 * size) do not, so a 64 MiB body cannot make the gateway hold gigabytes.
 */
const MAX_PARSED_BYTES = 3 * MAX_BODY_BYTES;

/** A body refused by the checks every JSON body gets (docs/api/conventions.md#json). */
class Refused {
  constructor(readonly message: string) {}
}

/** No charset, or UTF-8: the body is read as UTF-8, so another charset would be misread. */
function isUtf8Charset(contentType: string): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType)?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/**
 * The body as JSON, read here (not by a JSON parser that would answer in the API's envelope). A
 * body that sends nothing for `idleMs` is cut, as an upload's is (transfer/idle-timer.ts): a
 * write_file carries a whole file, and a client that stalls must not hold its socket and buffer.
 * It gets the checks of every JSON body as its bytes arrive (json-guard.ts: UTF-8, nesting,
 * finite numbers), and no string may hold a lone surrogate: it would be stored as U+FFFD, and a
 * path or a file's content would silently become another one.
 */
async function readJson(req: Request, idleMs: number): Promise<unknown> {
  const parts: Buffer[] = [];
  const guard = new JsonTextGuard('the message');
  let size = 0;
  let stalled = false;
  const idle = new IdleTimer(idleMs, () => {
    stalled = true;
    req.socket.destroy();
  });
  idle.start();
  try {
    for await (const chunk of req) {
      idle.touch();
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return TOO_LARGE;
      const refused = guard.push(chunk as Buffer);
      if (refused) return new Refused(refused.message);
      if (guard.estimatedParsedBytes() > MAX_PARSED_BYTES) return TOO_MANY_VALUES;
      parts.push(chunk as Buffer);
    }
  } catch (err) {
    if (stalled) return STALLED;
    throw err;
  } finally {
    idle.stop();
  }
  if (stalled) return STALLED;
  const refused = guard.end();
  if (refused) return new Refused(refused.message);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
  } catch {
    return MALFORMED;
  }
  if (hasLoneSurrogate(value)) return new Refused('the message must be valid Unicode (no lone surrogates in its strings)');
  return value;
}
