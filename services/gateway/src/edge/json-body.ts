import express, { type RequestHandler } from 'express';
import { AppError } from '@workspace/platform';
import { checkJsonText } from './json-guard.js';

export const JSON_LIMIT_BYTES = 1024 * 1024;

const parse = express.json({
  limit: JSON_LIMIT_BYTES,
  strict: false,
  type: () => true,
  // Runs on the raw bytes before JSON.parse; what it throws reaches the error handler as is.
  verify: (_req, _res, bytes, encoding) => {
    if (encoding.toLowerCase() !== 'utf-8') throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'JSON body must be UTF-8 (application/json; charset=utf-8)');
    const refused = checkJsonText(bytes);
    if (refused) throw refused;
  },
});

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.get('content-length');
  return (length !== undefined && length !== '0') || req.get('transfer-encoding') !== undefined;
}

/**
 * JSON bodies (docs/api/conventions.md#json): `application/json` (UTF-8) or 415, at most 1 MiB or
 * 413; invalid UTF-8, nesting deeper than 64 levels and numbers beyond ±1.8e308 are 400
 * (json-guard.ts), on every route. A request without a body reads as `{}` so that missing required
 * fields are reported by name.
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
