import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP proxy on loopback that adds headers to every request and forwards it, streamed both
 * ways (an SSE answer passes as it comes), to a target chosen later: for clients that cannot send
 * a header of their own, such as the MCP conformance suite's CLI and the Bearer token. Every
 * other header (Host and Origin included) passes as the client sent it.
 */
export interface HeaderProxy {
  /** The proxy's own URL (`http://127.0.0.1:<port>`): an origin to allow before the target starts. */
  url: string;
  /** Where requests go from now on, with `headers` set on each (they replace the client's). */
  forward(target: string, headers: Record<string, string>): void;
  close(): Promise<void>;
}

export async function startHeaderProxy(): Promise<HeaderProxy> {
  let route: { target: URL; headers: Record<string, string> } | undefined;
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!route) {
      res.writeHead(502).end('no target yet');
      return;
    }
    const { target, headers } = route;
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, ...headers } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forward: (target, headers) => {
      // Node names incoming headers in lower case: so must these be to replace the client's.
      route = { target: new URL(target), headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) };
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
