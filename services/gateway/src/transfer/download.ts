import { encodeExtended } from 'content-disposition';
import type { Request } from 'express';

/**
 * `attachment; filename="<fallback>"; filename*=UTF-8''<percent-encoded>`
 * (docs/api/files.md#file-names): the fallback is the name itself when it is printable ASCII
 * without `"` or `\`, else the name with every other character replaced by `_`. RFC 8187 encoding
 * comes from content-disposition; both parameters are always sent so every client sees the same
 * name.
 */
export function attachment(name: string): string {
  const fallback = [...name].map((c) => (c >= ' ' && c <= '~' && c !== '"' && c !== '\\' ? c : '_')).join('');
  return `attachment; filename="${fallback}"; filename*=${encodeExtended(name)}`;
}

/** HTTP dates have whole seconds; comparisons must too. */
function seconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

function etagList(header: string): string[] {
  return header.split(',').map((t) => t.trim().replace(/^W\//, ''));
}

/**
 * RFC 9110 §13.1.2/§13.1.3: If-None-Match (weak comparison, `*` matches) decides; only
 * without it does If-Modified-Since.
 */
export function notModified(req: Request, etag: string, lastModified: Date): boolean {
  const noneMatch = req.get('if-none-match');
  if (noneMatch !== undefined) return noneMatch.trim() === '*' || etagList(noneMatch).includes(etag);
  const since = Date.parse(req.get('if-modified-since') ?? '');
  return !Number.isNaN(since) && seconds(lastModified) <= Math.floor(since / 1000);
}

/** If-Range: a strong etag match or an unchanged date keeps the Range; anything else drops it. */
function ifRangeHolds(req: Request, etag: string, lastModified: Date): boolean {
  const condition = req.get('if-range');
  if (condition === undefined) return true;
  if (condition.startsWith('"') || condition.startsWith('W/')) return condition.trim() === etag;
  const date = Date.parse(condition);
  return !Number.isNaN(date) && seconds(lastModified) === Math.floor(date / 1000);
}

/**
 * The one byte range to send, or undefined for the whole file. Multiple, malformed or
 * unsatisfiable ranges are ignored, as RFC 9110 §14.2 allows, and the whole file is sent.
 */
export function requestedRange(req: Request, size: number, etag: string, lastModified: Date): { start: number; end: number } | undefined {
  if (req.get('range') === undefined || !ifRangeHolds(req, etag, lastModified)) return undefined;
  const ranges = req.range(size, { combine: true });
  if (!Array.isArray(ranges) || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  const [range] = ranges;
  return range && { start: range.start, end: range.end };
}
