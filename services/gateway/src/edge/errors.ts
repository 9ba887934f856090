import type { ErrorRequestHandler, Response } from 'express';
import { AppError, errors, httpStatusOf, isAppError, jsonDetails, type ErrorCode, type JsonDetails, type Logger } from '@workspace/platform';
import { clientLeft, isCancellation } from './client-gone.js';
import { requestIdOf } from './request-context.js';

/** Writes the contract's error envelope (and the headers some statuses call for). */
export function sendError(res: Response, err: AppError, status = httpStatusOf(err.code)): void {
  const requestId = requestIdOf(res);
  // A route with its own challenge (the MCP endpoint's resource_metadata) has set it already.
  if (err.code === 'UNAUTHENTICATED' && !res.hasHeader('WWW-Authenticate')) {
    const hasToken = err.message !== 'missing bearer token';
    // RFC 6750: error_description is printable ASCII without quotes or backslashes.
    const description = err.message.replace(/[^\x20-\x7e]|["\\]/g, ' ');
    res.setHeader('WWW-Authenticate', hasToken ? `Bearer realm="workspace", error="invalid_token", error_description="${description}"` : 'Bearer realm="workspace"');
  }
  // A limiter that knows when to come back has set its own Retry-After already.
  if ((err.code === 'UNAVAILABLE' || err.code === 'RATE_LIMITED') && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', '1');
  const body: { code: ErrorCode; message: string; requestId: string; details?: JsonDetails } = {
    code: err.code,
    message: err.message,
    requestId,
  };
  const details = jsonDetails(err);
  if (details) body.details = details;
  res.status(status).type('application/json').send(JSON.stringify({ error: body }));
}

/** Body-parser and router errors carry `type`/`status`; these are the client's mistakes. */
function fromHttpLayer(err: { type?: string; status?: number; statusCode?: number }): AppError | undefined {
  // The router decodes path parameters; `%FF` (not UTF-8) fails there, with its own text.
  if (err instanceof URIError) return errors.invalidArgument('a path parameter is not valid percent-encoded UTF-8');
  switch (err.type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'JSON body is larger than 1 MiB');
    case 'entity.parse.failed':
      return errors.invalidArgument('malformed JSON body');
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'JSON body must be UTF-8 (application/json; charset=utf-8)');
    case 'request.aborted':
    case 'request.size.invalid':
      return errors.invalidArgument('request body ended early');
  }
  const status = err.status ?? err.statusCode;
  if (status === 400) return errors.invalidArgument('malformed request');
  return undefined;
}

/**
 * The last middleware: every error becomes the envelope; unknown ones are logged, never shown.
 * A request whose client left and whose work was cancelled for it (an abandoned long poll or
 * download) is normal client behaviour: logged at debug, not as a failure.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const known = isAppError(err) ? err : fromHttpLayer(err as { type?: string; status?: number });
    const appError = known ?? errors.internal(err);
    if (appError.code === 'INTERNAL' || appError.code === 'UNAVAILABLE') {
      const where = { requestId: requestIdOf(res), method: req.method, path: req.path };
      if (clientLeft(res) && isCancellation(appError)) logger.debug(where, 'client went away');
      else logger.error({ err: appError.cause ?? err, ...where }, 'request failed');
    }
    if (res.headersSent) {
      // A streamed response already started: the only honest signal left is a broken connection.
      res.destroy();
      return;
    }
    try {
      sendError(res, appError);
    } catch (renderError) {
      // Never fall through to Express's HTML error page: answer with the bare envelope.
      logger.error({ err: renderError, requestId: requestIdOf(res) }, 'could not render error');
      res.removeHeader('WWW-Authenticate');
      res.status(500).type('application/json').send(JSON.stringify({ error: { code: 'INTERNAL', message: 'internal error', requestId: requestIdOf(res) } }));
    }
  };
}
