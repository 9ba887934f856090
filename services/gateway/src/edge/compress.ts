import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

/** JSON and the API reference's text (openapi.json, docs assets); bytes of files never. */
const COMPRESSIBLE = /^(application\/(json|[\w.+-]+\+json|javascript)|text\/(html|css|javascript))\b/i;
/** docs/api/conventions.md#compression: responses over 1 KiB. */
const THRESHOLD_BYTES = 1024;

/**
 * gzip or br (whichever the client prefers, by `Accept-Encoding`) for the API's own JSON and
 * documents over 1 KiB. File bytes — downloads, exports, temporary links — are never touched,
 * whatever their media type (a `.md` download is text/markdown): they carry
 * Content-Disposition, keep their Content-Length and ranges, and stream as they are.
 */
export function compressJson(): RequestHandler {
  return compression({ threshold: THRESHOLD_BYTES, filter: compressible });
}

function compressible(_req: Request, res: Response): boolean {
  const type = res.getHeader('Content-Type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return false;
  return res.getHeader('Content-Disposition') === undefined && res.getHeader('Content-Range') === undefined;
}
