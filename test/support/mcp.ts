import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ApiUser } from './stack.js';

export interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string; data?: string; mimeType?: string; resource?: { uri: string; blob?: string; mimeType?: string } }[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool's own shape
  structuredContent?: any;
}

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  close(): Promise<void>;
}

/** The official SDK client on the gateway's /v1/mcp with the user's token; `sessionId` resumes a session. */
export async function mcpConnect(baseUrl: string, u: Pick<ApiUser, 'token'>, options: { sessionId?: string; protocolVersion?: string } = {}): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${u.token}` } },
    ...(options.sessionId && { sessionId: options.sessionId }),
    reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 50 },
  });
  const client = new Client({ name: 'e2e', version: '1.0.0' }, { capabilities: {} });
  if (options.sessionId) {
    // Resuming: no initialize; the transport sends the session id it was given.
    await client.connect(transport);
  } else {
    await client.connect(transport);
  }
  return {
    client,
    transport,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as unknown as ToolAnswer,
    close: () => client.close(),
  };
}

/** A raw POST to /v1/mcp (for what the SDK client never sends). */
export function mcpPost(baseUrl: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${baseUrl}/v1/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A JSON answer's body, for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies of any shape
export async function body(res: Response): Promise<any> {
  return res.json();
}
