import { z } from 'zod';
import { AppError } from '@workspace/platform';
import { defineRoute, type RouteDef } from '../../api/route.js';
import { MCP_PATH } from './mcp.router.js';

const JsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('One JSON-RPC 2.0 message of the Model Context Protocol');

const SESSION_HEADER = { name: 'Mcp-Session-Id', description: 'The session, from the answer to `initialize`; required on every other request', schema: z.string(), example: '6f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f' };
const COMMON = ['UNAUTHENTICATED', 'ORIGIN_NOT_ALLOWED', 'RATE_LIMITED', 'UNAVAILABLE'] as const;
const served = async (): Promise<void> => {
  // The MCP router answers every request to this path before the route table is reached.
  throw new AppError('METHOD_NOT_ALLOWED', 'served by the MCP endpoint');
};

/**
 * The MCP endpoint in the OpenAPI document (docs/api/mcp.md). The endpoint itself is served by
 * mcp.router.ts, mounted before the route table; these entries document it.
 */
export function mcpRouteDocs(): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: MCP_PATH,
      operationId: 'mcpPost',
      summary: 'MCP: send a JSON-RPC message (Streamable HTTP)',
      description:
        'The workspace as a Model Context Protocol server (docs/api/mcp.md). `initialize` opens a session (`Mcp-Session-Id` in the answer); other messages ' +
        'name it. Requires `Accept: application/json, text/event-stream`. A request is answered with its JSON-RPC response as JSON (`application/json`); notifications and responses with 202. ' +
        'Transport errors (unknown session 404, wrong Accept 406, malformed JSON-RPC 400) carry a JSON-RPC error body; 401 sends `WWW-Authenticate` with ' +
        '`resource_metadata`.',
      tag: 'MCP',
      rawBody: { contentType: 'application/json', schema: JsonRpcMessage, description: 'One JSON-RPC message, at most 64 MiB; a file a tool writes at most MAX_UPLOAD_BYTES' },
      requestHeaders: [{ ...SESSION_HEADER, required: false }],
      example: { body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } },
      responses: {
        200: { description: 'The response, as a server-sent event stream', contentType: 'text/event-stream', headers: { 'Mcp-Session-Id': 'The session' } },
        202: { description: 'Accepted (notifications and responses)' },
      },
      errors: [...COMMON],
      handler: served,
    }),
    defineRoute({
      method: 'get',
      path: MCP_PATH,
      operationId: 'mcpStream',
      summary: 'MCP: the session\'s stream of server messages (resource notifications)',
      description:
        'Server-sent events: `notifications/resources/updated` for the session\'s subscriptions, each with an SSE `id`. `Accept: text/event-stream` required. ' +
        '`Last-Event-ID` continues right after that event; one this session\'s stream never sent → 400 with a JSON-RPC error body.',
      tag: 'MCP',
      requestHeaders: [
        { ...SESSION_HEADER, required: true },
        { name: 'Last-Event-ID', description: 'The id of the last event read, to continue right after it', schema: z.string(), required: false },
      ],
      example: {},
      responses: { 200: { description: 'The stream', contentType: 'text/event-stream' } },
      errors: [...COMMON],
      handler: served,
    }),
    defineRoute({
      method: 'delete',
      path: MCP_PATH,
      operationId: 'mcpEndSession',
      summary: 'MCP: end a session',
      description: 'Later requests naming the session answer 404.',
      tag: 'MCP',
      requestHeaders: [{ ...SESSION_HEADER, required: true }],
      example: {},
      responses: { 200: { description: 'Ended' } },
      errors: [...COMMON],
      handler: served,
    }),
  ];
}
