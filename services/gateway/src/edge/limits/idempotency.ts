import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestHandler, Response } from 'express';
import { AppError, errors, isAppError, userTag, type Logger } from '@workspace/platform';
import { clientWentAway } from '../client-gone.js';
import type { IdempotencyLock, IdempotencyStore, StoredResponse } from './idempotency-store.js';
import { withTimeout } from './timeout.js';
import { requestIdOf, setIdempotencyKey, userOf } from '../request-context.js';

export interface IdempotencyOptions {
  store: IdempotencyStore;
  logger: Logger;
  /** How long a response is replayed (docs/api/conventions.md#idempotency: 24 h). */
  ttlMs?: number;
  /** The lock's expiry: a replica that dies mid-request holds a key at most this long. */
  lockMs?: number;
  /** How long a repeat waits for the first request's answer before giving up with 503. */
  waitMs?: number;
  /** How long to wait for Redis before answering 503. */
  timeoutMs?: number;
}

/** docs/api/conventions.md#idempotency: 1–255 printable ASCII characters. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/** Headers a replay repeats; RateLimit-* and X-Request-Id belong to the repeat itself. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'cache-control'];
/** Creation responses are small (a few KiB); a larger one is not kept (a repeat runs again). */
const MAX_STORED_BYTES = 64 * 1024;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * `Idempotency-Key` on a creating POST (docs/api/conventions.md#idempotency). The first request
 * with a key takes a lock in Redis and runs; its response (unless 5xx) is kept for 24 h and
 * replayed — status, body, Location/ETag — to every repeat with the same method, path and body,
 * which creates nothing. A repeat that arrives while the first runs waits for its answer; if the
 * first replica dies, its lock expires and the repeat runs. The same key with another request →
 * 422.
 */
export function idempotency(options: IdempotencyOptions): RequestHandler {
  const ttlMs = options.ttlMs ?? 24 * 3600_000;
  const lockMs = options.lockMs ?? 10_000;
  const waitMs = options.waitMs ?? 130_000;
  const timeoutMs = options.timeoutMs ?? 2_000;
  return async (req, res, next) => {
    const key = req.get('idempotency-key');
    if (key === undefined) {
      next();
      return;
    }
    if (!KEY_PATTERN.test(key)) throw errors.invalidArgument('Idempotency-Key must be 1–255 printable ASCII characters', 'Idempotency-Key');
    const recordKey = `gateway:idempotency:${userTag(userOf(res))}:${sha256(key)}`;
    const fingerprint = sha256(JSON.stringify([req.method, req.originalUrl, req.body ?? null]));
    let gone = false;
    res.once('close', () => (gone = true));
    const settled = await settle(options.store, { recordKey, fingerprint, lockMs, waitMs, timeoutMs, gone: () => gone });
    if (!('extend' in settled)) {
      replay(res, settled);
      return;
    }
    // For services that dedupe by themselves (RouteInput.idempotencyKey): fixed length, bound to
    // the request too, so a retry with another body after a 5xx is not answered with the first.
    setIdempotencyKey(res, `http:${sha256(`${key}\n${fingerprint}`)}`);
    keepResponse(res, settled, { fingerprint, ttlMs, lockMs, logger: options.logger });
    next();
  };
}

/** Takes the lock, or waits until the request holding it has answered (or died). */
async function settle(
  store: IdempotencyStore,
  o: { recordKey: string; fingerprint: string; lockMs: number; waitMs: number; timeoutMs: number; gone: () => boolean },
): Promise<IdempotencyLock | StoredResponse> {
  const giveUpAt = Date.now() + o.waitMs;
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    let found;
    try {
      found = await withTimeout(store.begin(o.recordKey, o.fingerprint, o.lockMs), o.timeoutMs);
    } catch (err) {
      throw errors.unavailable('the idempotency store', err);
    }
    if (found.kind === 'owner') return found.lock;
    if (found.fingerprint !== o.fingerprint) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with another request (method, path or body); use a new key');
    }
    if (found.kind === 'done') return found.response;
    if (Date.now() + pause > giveUpAt) throw new AppError('UNAVAILABLE', 'the first request with this Idempotency-Key is still running; retry later');
    // The client left: nobody waits for this answer any more.
    if (o.gone()) throw clientWentAway();
    await sleep(pause);
  }
}

function replay(res: Response, stored: StoredResponse): void {
  let body = Buffer.from(stored.body, 'base64');
  // An error envelope names the request it answers: this one.
  if (stored.status >= 400 && stored.headers['content-type']?.startsWith('application/json')) {
    const envelope = JSON.parse(body.toString('utf8')) as { error?: { requestId?: string } };
    if (envelope.error) envelope.error.requestId = requestIdOf(res);
    body = Buffer.from(JSON.stringify(envelope));
  }
  res.status(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.end(body);
}

/**
 * Collects the response as it is written; when it ends, stores it in place of the lock (or
 * drops the lock after a 5xx, or when the connection closed before a response was made).
 * The lock is extended meanwhile. Failures to store are logged: the client has its answer.
 */
function keepResponse(res: Response, lock: IdempotencyLock, o: { fingerprint: string; ttlMs: number; lockMs: number; logger: Logger }): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  const collect = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size <= MAX_STORED_BYTES) chunks.push(buffer);
  };
  const heartbeat = setInterval(() => void lock.extend(o.lockMs).catch(() => undefined), Math.max(1, Math.floor(o.lockMs / 3)));
  heartbeat.unref();
  const settleWith = (work: Promise<boolean>) => {
    clearInterval(heartbeat);
    work.catch((err: unknown) => o.logger.warn({ err: isAppError(err) ? err : String(err), requestId: requestIdOf(res) }, 'could not record an idempotent response; a repeat runs again'));
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    collect(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (!ended) {
      ended = true;
      collect(chunk, rest[0]);
      const keep = res.statusCode < 500 && size <= MAX_STORED_BYTES;
      settleWith(keep ? lock.complete(snapshot(res, Buffer.concat(chunks)), o.fingerprint, o.ttlMs) : lock.drop());
    }
    return end(chunk, ...rest);
  }) as Response['end'];
  res.once('close', () => {
    if (!ended) {
      // The client left before an answer: the call it made may still land. The lock is not
      // dropped but left to expire (lockMs), so a prompt retry waits for it instead of racing it.
      ended = true;
      clearInterval(heartbeat);
    }
  });
}

function snapshot(res: Response, body: Buffer): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { status: res.statusCode, headers, body: body.toString('base64') };
}
