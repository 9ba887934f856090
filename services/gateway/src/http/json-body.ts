import express, { type RequestHandler } from 'express';
import { AppError } from '@workspace/platform';

export const JSON_LIMIT_BYTES = 1024 * 1024;

const parse = express.json({ limit: JSON_LIMIT_BYTES, strict: false, type: () => true });

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.get('content-length');
  return (length !== undefined && length !== '0') || req.get('transfer-encoding') !== undefined;
}

/**
 * JSON bodies of CONTRACT §1: `application/json` (UTF-8) or 415, at most 1 MiB or 413. A request
 * without a body reads as `{}` so that missing required fields are reported by name.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  if (!hasBody(req)) {
    req.body = {};
    next();
    return;
  }
  if (!req.is('application/json')) {
    next(new AppError('UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json'));
    return;
  }
  parse(req, res, next);
};
