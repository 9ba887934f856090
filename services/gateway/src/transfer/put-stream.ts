import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errors } from '@workspace/platform';

/**
 * PUTs `length` bytes from `body` to a presigned URL as they come (nothing buffered whole) and
 * resolves with their SHA-256 once the store has answered 200. A store failure is UNAVAILABLE;
 * a body that is not `length` bytes long fails the request (the store refuses it).
 */
export async function putStream(url: string, body: Readable, length: number, signal?: AbortSignal): Promise<string> {
  const target = new URL(url);
  const hash = createHash('sha256');
  const hasher = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const transport = target.protocol === 'https:' ? https : http;
  const req = transport.request(target, { method: 'PUT', headers: { 'Content-Length': length }, ...(signal && { signal }) });
  const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    // `on`, not `once`: a request destroyed after a failure errors again, and must not crash the process.
    req.on('error', reject);
  });
  answered.catch(() => undefined); // seen below, or superseded by the body's failure
  try {
    await pipeline(body, hasher, req);
    const res = await answered;
    res.resume();
    if (res.statusCode !== 200) throw new Error(`PUT answered ${res.statusCode}`);
  } catch (err) {
    req.destroy();
    throw errors.unavailable('file storage', err);
  }
  return hash.digest('hex');
}
