import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { errors, retryWhen, type AppError } from '@workspace/platform';

/** How long the store may take to start answering a request before it counts as down. */
export const STORE_ANSWER_MS = 60_000;

export interface ByteRange {
  start: number;
  /** Inclusive, as in `Range: bytes=start-end`. */
  end: number;
}

function unavailable(cause: unknown): AppError {
  return errors.unavailable('the object store', cause);
}

/** A request that failed before its answer; `stale` when it went out on a pooled connection the store had closed. */
class RequestFailed extends Error {
  constructor(
    cause: unknown,
    readonly stale: boolean,
  ) {
    super('object store request failed', { cause });
  }
}

/** A request that went out on a pooled connection the store had closed goes once more (on a fresh one). */
const sendAgainIfStale = retryWhen((err) => err instanceof RequestFailed && err.stale, { retries: 1 });

/** Reads an answer's body (empty, or an S3 error document) into nothing, to free the connection. */
function discard(res: IncomingMessage): void {
  res.on('error', () => undefined).resume();
}

/**
 * Requests to the object store by presigned URL (the files service signs them; bytes never
 * cross gRPC), over keep-alive connections. Every failure — a refused or reset connection, no
 * answer in time, a status the store should not give — is UNAVAILABLE for the client, with the
 * cause kept for the log only.
 */
export class ObjectStore {
  /** Told of every body byte sent to (`in`) or read from (`out`) the store: for metrics. */
  private readonly count: (direction: 'in' | 'out', bytes: number) => void;

  constructor(options: { onBytes?: (direction: 'in' | 'out', bytes: number) => void } = {}) {
    this.count = options.onBytes ?? (() => undefined);
  }

  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, scheduling: 'lifo' }),
    'https:': new https.Agent({ keepAlive: true, scheduling: 'lifo' }),
  };

  /** PUTs one object or part and resolves with the ETag the store answered. */
  async put(url: string, body: Buffer, signal?: AbortSignal): Promise<string> {
    const res = await this.send(url, { method: 'PUT', headers: { 'Content-Length': body.length } }, body, signal);
    discard(res);
    const etag = res.headers.etag;
    if (res.statusCode !== 200 || !etag) throw unavailable(new Error(`PUT answered ${res.statusCode}${etag ? '' : ' without an ETag'}`));
    this.count('in', body.length);
    return etag;
  }

  /**
   * GETs an object, or one range of it, and resolves once the store has answered with the
   * bytes asked for; the caller reads the body. `signal` cancels the request at any time.
   */
  async get(url: string, range?: ByteRange, signal?: AbortSignal): Promise<IncomingMessage> {
    const headers = range ? { Range: `bytes=${range.start}-${range.end}` } : {};
    const res = await this.send(url, { method: 'GET', headers }, undefined, signal);
    const expected = range ? 206 : 200;
    if (res.statusCode !== expected) {
      discard(res);
      throw unavailable(new Error(`GET answered ${res.statusCode}, expected ${expected}`));
    }
    // Counted once read whole ('end' leaves the stream paused, unlike a 'data' listener).
    res.once('end', () => this.count('out', Number(res.headers['content-length'] ?? 0)));
    return res;
  }

  /** Closes pooled connections; requests in flight are not waited for. */
  close(): void {
    for (const agent of Object.values(this.agents)) agent.destroy();
  }

  /** One request, sent again once if it went out on a pooled connection the store had closed. */
  private async send(url: string, options: { method: string; headers: OutgoingHttpHeaders }, body: Buffer | undefined, signal?: AbortSignal): Promise<IncomingMessage> {
    const target = new URL(url);
    const agent = this.agents[target.protocol as keyof ObjectStore['agents']];
    if (!agent) throw unavailable(new Error(`unsupported URL scheme ${target.protocol}`));
    try {
      return await sendAgainIfStale(() => request(target, { ...options, agent, ...(signal && { signal }) }, body), signal);
    } catch (err) {
      throw unavailable(err);
    }
  }
}

/** Resolves with the response once its head arrives. */
function request(target: URL, options: http.RequestOptions, body: Buffer | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(target, { ...options, timeout: STORE_ANSWER_MS });
    req.once('timeout', () => req.destroy(new Error(`no answer from the object store within ${STORE_ANSWER_MS} ms`)));
    // `on`, not `once`: a request destroyed after its answer (a cancelled download) errors again.
    req.on('error', (err) => reject(new RequestFailed(err, req.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET')));
    req.once('response', (res) => {
      // From here the body's pace is the reader's: a slow client must not time the store out.
      req.setTimeout(0);
      resolve(res);
    });
    req.end(body);
  });
}
