import { Agent, request as httpRequest } from 'node:http';

/** One concrete request, exactly as it goes on the wire (the path is sent unnormalized). */
export interface WireRequest {
  method: string;
  /** Path and query, already encoded (or deliberately not). */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  ms: number;
}

/** What the client saw when no HTTP answer came (a reset, a timeout). */
export interface WireFailure {
  error: string;
  ms: number;
}

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * A keep-alive HTTP/1.1 client: node:http sends the target as given (no URL normalization),
 * which a fuzzer needs; `maxSockets` bounds the connections per gateway.
 */
export function wireClient(baseUrl: string, maxSockets: number) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const send = (req: WireRequest): Promise<WireResponse | WireFailure> =>
    new Promise((resolve) => {
      const started = performance.now();
      const ms = () => Math.round(performance.now() - started);
      let settled = false;
      const done = (value: WireResponse | WireFailure) => {
        if (!settled) resolve(value);
        settled = true;
      };
      const headers = { ...req.headers, ...(req.body !== undefined && { 'content-length': String(req.body.length) }) };
      let out;
      try {
        out = httpRequest({ agent, host: url.hostname, port: url.port, method: req.method, path: req.target, headers, timeout: REQUEST_TIMEOUT_MS });
      } catch (err) {
        // The client itself refused to send it (e.g. an invalid header): not a server answer.
        done({ error: `client refused: ${(err as Error).message}`, ms: ms() });
        return;
      }
      out.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => done({ error: `response broke: ${err.message}`, ms: ms() }));
        res.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
          done({ status: res.statusCode ?? 0, headers: flat, text: Buffer.concat(chunks).toString('utf8'), ms: ms() });
        });
      });
      out.on('timeout', () => out.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
      out.on('error', (err) => done({ error: err.message, ms: ms() }));
      out.end(req.body);
    });
  return { send, close: () => agent.destroy() };
}

export function isFailure(r: WireResponse | WireFailure): r is WireFailure {
  return 'error' in r;
}

/** Runs `tasks` with at most `limit` in flight; results in input order. */
export async function bounded<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}
