import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';

/**
 * Deadline of streamed transfers. They run as long as the client keeps sending or reading (a
 * 5 GiB upload over a slow link takes hours); a client that goes away cancels the call at
 * once through RouteInput.call.signal.
 */
export const TRANSFER_DEADLINE_MS = 24 * 3600 * 1000;

/**
 * Sets status and headers as given. Not `res.set`: Express appends `; charset=utf-8` to
 * text types, which would claim an encoding the stored bytes may not have.
 */
export function writeHead(res: Response, status: number, headers: Record<string, string | number>): void {
  res.status(status);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/**
 * Streams gRPC data chunks into the response with backpressure. The first chunk is awaited
 * before any header is sent, so an error up to then is still a proper error response; after
 * that, a failure can only break the connection (pipeline destroys the response).
 */
export async function sendChunks(res: Response, chunks: AsyncIterable<{ data: Buffer }>, headers: Record<string, string | number>, status = 200): Promise<void> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  writeHead(res, status, headers);
  if (first.done) {
    res.end();
    return;
  }
  async function* bytes(head: Buffer) {
    yield head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value.data;
  }
  await pipeline(Readable.from(bytes(first.value.data)), res);
}
