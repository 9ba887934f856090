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
