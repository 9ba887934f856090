import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { OpenDownloadResponse } from '@workspace/proto/workspace/files/v1/files';
import { errors } from '@workspace/platform';
import { attachment, notModified, requestedRange } from './download.js';
import { watchIdle } from './idle-timer.js';
import { STORE_ANSWER_MS, type ByteRange, type ObjectStore } from './object-store.js';
import { writeHead } from './write-head.js';

/**
 * Answers with the bytes OpenDownload pointed at, as a download (docs/api/files.md#download):
 * validators, 304, one Range (206), Content-Disposition; streamed from the store. Shared by
 * temporary links.
 */
export async function sendFile(store: ObjectStore, opened: OpenDownloadResponse, o: { req: Request; res: Response; signal: AbortSignal | undefined }): Promise<void> {
  const { req, res } = o;
  const { entry: file, url } = opened;
  if (!file) throw errors.internal(new Error('OpenDownload answered without an entry'));
  const etag = `"${file.sha256}"`;
  const lastModified = new Date(file.modifiedAt);
  const validators = { ETag: etag, 'Last-Modified': lastModified.toUTCString(), 'Cache-Control': 'private, no-cache' };
  if (notModified(req, etag, lastModified)) {
    writeHead(res, 304, validators);
    res.end();
    return;
  }
  const range = requestedRange(req, file.size, etag, lastModified);
  const length = range ? range.end - range.start + 1 : file.size;
  const headers = {
    ...validators,
    'Content-Type': file.mimeType,
    'Content-Length': length,
    'Content-Disposition': attachment(file.name),
    'Accept-Ranges': 'bytes',
    ...(range && { 'Content-Range': `bytes ${range.start}-${range.end}/${file.size}` }),
  };
  const status = range ? 206 : 200;
  if (req.method === 'HEAD' || length === 0) {
    writeHead(res, status, headers);
    res.end();
    return;
  }
  const upstream = await openBytes(store, { url, range, length, signal: o.signal });
  writeHead(res, status, headers);
  await relay(upstream, res);
}

/**
 * The store's answer, checked before any header goes out: a failure up to here is still a
 * proper 503. A length other than the one announced would corrupt the client's copy.
 */
async function openBytes(store: ObjectStore, o: { url: string; range: ByteRange | undefined; length: number; signal: AbortSignal | undefined }): Promise<IncomingMessage> {
  const upstream = await store.get(o.url, o.range, o.signal);
  const announced = upstream.headers['content-length'];
  if (announced !== undefined && Number(announced) !== o.length) {
    upstream.destroy();
    throw errors.unavailable('the object store', new Error(`GET answered ${announced} bytes, expected ${o.length}`));
  }
  return upstream;
}

/**
 * Store → client with backpressure. A client that leaves destroys the upstream request (the
 * pipeline, and the call's signal); after the headers, an upstream failure or stall can only
 * break the connection, which the error handler does for a response already started.
 */
async function relay(upstream: IncomingMessage, res: Response): Promise<void> {
  // Whichever side failed first decides: the other one only fails because the pipeline tore it down.
  let first: 'store' | 'client' | undefined;
  upstream.once('error', () => (first ??= 'store'));
  res.once('close', () => {
    if (!res.writableFinished) first ??= 'client';
  });
  const done = pipeline(upstream, res);
  const unwatch = watchIdle(upstream, STORE_ANSWER_MS, () => upstream.destroy(new Error(`the object store sent nothing for ${STORE_ANSWER_MS} ms`)));
  try {
    await done;
  } catch (err) {
    if (first === 'client') return; // nobody is left to answer
    throw errors.unavailable('the object store', err);
  } finally {
    unwatch();
  }
}
