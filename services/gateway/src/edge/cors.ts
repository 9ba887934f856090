import cors from 'cors';
import type { RequestHandler } from 'express';

/**
 * What a browser on an allowed origin may send beyond the safelisted headers. `Upload-*` is
 * spelled out: Access-Control-Allow-Headers takes no patterns (and `*` never covers
 * Authorization).
 */
export const CORS_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'If-Modified-Since',
  'If-Range',
  'Idempotency-Key',
  'Range',
  'X-Request-Id',
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Offset',
  'Upload-Metadata',
  'Upload-Defer-Length',
  'Upload-Concat',
  'Upload-Checksum',
  'X-HTTP-Method-Override',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'Last-Event-ID',
];

/** Response headers a browser script may read beyond the safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Content-Disposition',
  'Content-Range',
  'Accept-Ranges',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Request-Id',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Expires',
  'Upload-Metadata',
  'Upload-Defer-Length',
  'Mcp-Session-Id',
];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * CORS for the origins listed in CORS_ORIGINS (docs/api/conventions.md#cors), on every route,
 * errors included: a preflight from one of them is answered 204 here, before authentication
 * (browsers send no credentials with it). Any other origin gets no CORS header at all, so the
 * browser refuses the response; its preflight falls through to the routes (405, or tus's own
 * OPTIONS). Credentials are bearer tokens, never cookies, so `Access-Control-Allow-Credentials` is
 * not sent.
 */
export function corsFor(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins.map((o) => o.replace(/\/+$/, '')));
  return cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: METHODS,
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    optionsSuccessStatus: 204,
  });
}
