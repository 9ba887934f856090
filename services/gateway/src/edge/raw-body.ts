import type { Request, Response } from 'express';
import { AppError, errors } from '@workspace/platform';

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limit} bytes`, { details: { limit: String(limit) } });
}

/**
 * The request body exactly as sent (a signature covers these bytes), of any content type, at
 * most `limit` bytes. Over the limit → 413 at once: a declared Content-Length is refused before
 * reading; a chunked body stops being read and the connection closes after the answer.
 */
export function readRawBody(req: Request, res: Response, limit: number): Promise<Buffer> {
  if (Number(req.get('content-length') ?? 0) > limit) {
    res.setHeader('Connection', 'close');
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      done();
      req.pause();
      res.setHeader('Connection', 'close');
      reject(tooLarge(limit));
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = () => {
      done();
      reject(errors.invalidArgument('request body could not be read'));
    };
    // Closed before the end: the client went away; nothing is started on half a body.
    const onClose = () => {
      done();
      reject(errors.invalidArgument('request body ended early'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}
