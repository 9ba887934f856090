import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { toInvalidArgument } from '../../api/validate.js';
import { describeTool, errorResult, successResult } from './tool-result.js';
import { TOOLS } from './tools/index.js';
import type { ToolContext } from './tools/tool.js';
import { FILE_TEMPLATE, listResources, pathParam, readResource, resourceError } from './resources.js';
import { MAX_SUBSCRIPTIONS, type McpSession, type SessionStore } from './sessions.redis.js';

export const SERVER_INFO = { name: 'workspace', title: 'Workspace', version: '1.0.0' };

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));
const TOOL_LIST = TOOLS.map(describeTool);
/**
 * One JSON Schema validator for every request's server: left to itself, each `Server` builds its
 * own Ajv instance with its formats (~0.8 ms of CPU and much garbage per request), for
 * elicitation, which this server never asks for.
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

export interface ServerContext {
  tool: ToolContext;
  sessions: SessionStore;
  /** Undefined while the session is being initialized. */
  session: McpSession | undefined;
  /** Takes the changes cursor a first subscription's notifications start from. */
  startCursor: () => Promise<string>;
}

/**
 * The MCP server for one HTTP request: the session lives in Redis (docs/api/mcp.md#sessions), so
 * each request gets a server bound to its user and session, answers, and is dropped.
 */
export function buildServer(sc: ServerContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { subscribe: true, listChanged: true }, logging: {} },
    jsonSchemaValidator: SCHEMA_VALIDATOR,
    instructions:
      'The user\'s workspace: files under /files (projects under /files/projects/<name>); a relative path is taken relative to /files. Read ' +
      'before you write; edits and writes may carry the sha256 you read as expectedSha256 so that a concurrent change is never overwritten.',
  });
  const { tool: ctx } = sc;

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(methodOf(CallToolRequestSchema), async (raw, extra) => {
    const request = paramsOf(CallToolRequestSchema, raw);
    const tool = BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    const args = tool.input.safeParse(request.params.arguments ?? {});
    const where = { requestId: ctx.call.requestId, tool: tool.name };
    if (!args.success) return errorResult(toInvalidArgument(args.error, 'body'), ctx.logger, where);
    try {
      return successResult(await tool.run(args.data, { ...ctx, call: { ...ctx.call, signal: extra.signal } }));
    } catch (err) {
      return errorResult(err, ctx.logger, where);
    }
  });

  const guard = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (err) {
      throw resourceError(err);
    }
  };
  server.setRequestHandler(methodOf(ListResourcesRequestSchema), (raw) => guard(() => listResources(ctx, paramsOf(ListResourcesRequestSchema, raw).params?.cursor)));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [FILE_TEMPLATE] }));
  server.setRequestHandler(methodOf(ReadResourceRequestSchema), (raw) => guard(() => readResource(ctx, paramsOf(ReadResourceRequestSchema, raw).params.uri)));
  server.setRequestHandler(methodOf(SubscribeRequestSchema), async (raw) => {
    const request = paramsOf(SubscribeRequestSchema, raw);
    const session = sessionOf(sc);
    const path = pathParam(request.params.uri).replace(/\/+$/, '') || '/files';
    // The path rules apply (the path need not exist); the feed's position is the whole workspace's.
    await guard(() => ctx.files.getChangesCursor({ path }, ctx.call));
    await sc.sessions.initCursor(session.id, await sc.startCursor());
    if (!(await sc.sessions.subscribe(session.id, path))) {
      throw new McpError(ErrorCode.InvalidParams, `a session holds at most ${MAX_SUBSCRIPTIONS} subscriptions: unsubscribe from one first`);
    }
    return {};
  });
  server.setRequestHandler(methodOf(UnsubscribeRequestSchema), async (raw) => {
    const request = paramsOf(UnsubscribeRequestSchema, raw);
    const session = sessionOf(sc);
    await sc.sessions.unsubscribe(session.id, pathParam(request.params.uri).replace(/\/+$/, '') || '/files');
    return {};
  });
  server.setRequestHandler(methodOf(SetLevelRequestSchema), async (raw) => {
    const request = paramsOf(SetLevelRequestSchema, raw);
    await sc.sessions.setLogLevel(sessionOf(sc), request.params.level);
    return {};
  });
  return server;
}

/**
 * A request schema reduced to its method. The SDK parses a request with the schema it was
 * registered with before the handler runs, and answers a mismatch as an internal error (-32603)
 * with zod's text; registered so, the handler checks the params itself (paramsOf).
 */
function methodOf<S extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(schema: S) {
  return z.looseObject({ method: schema.shape.method });
}

/** The request as `schema` reads it; params it refuses are invalid params (-32602), in our words. */
function paramsOf<S extends z.ZodType>(schema: S, request: unknown): z.output<S> {
  const parsed = schema.safeParse(request);
  if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid params: ${toInvalidArgument(parsed.error, 'body').message}`);
  return parsed.data;
}

function sessionOf(sc: ServerContext): McpSession {
  if (!sc.session) throw new McpError(ErrorCode.InvalidRequest, 'initialize the session first');
  return sc.session;
}
