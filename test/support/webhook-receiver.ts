import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** How a receiver answers: a status, or `hang` (never answers; the sender's timeout ends it). */
export type Answer = number | 'hang';

/**
 * A webhook receiver for tests: a plain node http server on a random loopback port that records
 * every POST and answers as `answer` says (changeable at any time). `stop()` closes it (the port
 * refuses connections from then on); `start()` listens again on the same port.
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: Answer;
  port = 0;
  #server: Server | undefined;
  readonly #hanging = new Set<ServerResponse>();

  constructor(answer: Answer = 204) {
    this.answer = answer;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Distinct `webhook-id`s received: what a receiver that dedupes sees. */
  get ids(): string[] {
    return [...new Set(this.received.map((r) => r.headers['webhook-id']!))];
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
    return this;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
    if (this.answer === 'hang') {
      this.#hanging.add(res);
      res.on('close', () => this.#hanging.delete(res));
      return;
    }
    res.statusCode = this.answer;
    res.end();
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    for (const res of this.#hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
