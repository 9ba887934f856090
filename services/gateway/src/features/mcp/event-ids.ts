import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Where a session's notifications stand (docs/api/mcp.md#subscriptions): after `cursor` in the
 * changes feed, its first `changes` changes notified whole and the first `uris` notifications of
 * the next one. One change can notify several URIs (a move, a directory above subscriptions), so
 * a cursor alone cannot name the place between two of them; and the changes after a cursor are
 * always the same ones in the same order (the feed only appends), so an index into them can.
 */
export interface Position {
  cursor: string;
  changes: number;
  uris: number;
}

export const startOf = (cursor: string): Position => ({ cursor, changes: 0, uris: 0 });

/**
 * The form kept in Redis: a cursor alone, as the first subscription stores it, is the position
 * before its changes; the others are JSON (a cursor of the feed never starts with `[`).
 */
export function positionText(p: Position): string {
  return p.changes === 0 && p.uris === 0 ? p.cursor : JSON.stringify([p.cursor, p.changes, p.uris]);
}

export function parsePosition(text: string): Position | undefined {
  if (!text.startsWith('[')) return text ? startOf(text) : undefined;
  let parts: unknown;
  try {
    parts = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 3) return undefined;
  const [cursor, changes, uris] = parts as unknown[];
  if (typeof cursor !== 'string' || cursor === '' || cursor.startsWith('[') || !isCount(changes) || !isCount(uris)) return undefined;
  return { cursor, changes, uris };
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/**
 * The MAC ties an id to its session, keyed by the session's id: an id of another session, or
 * one altered or made up, is refused. The session's own client knows that key and could forge
 * ids of its own session; that only moves it within its own user's feed, whose cursors the
 * files service signs and checks itself.
 */
function mac(sessionId: string, payload: string): string {
  return createHmac('sha256', sessionId).update(payload).digest().subarray(0, 16).toString('base64url');
}

/** The SSE `id` of the event that takes a session to `p`: opaque to clients, `<base64url>.<mac>`. */
export function eventId(sessionId: string, p: Position): string {
  const payload = Buffer.from(positionText(p), 'utf8').toString('base64url');
  return `${payload}.${mac(sessionId, payload)}`;
}

/** The position a Last-Event-ID names; undefined when it is not an id this session's stream sent. */
export function positionOfEventId(sessionId: string, id: string): Position | undefined {
  const [payload = '', given = '', extra] = id.split('.');
  if (extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(payload)) return undefined;
  // Compared as text: base64 decoding is lenient (trailing characters may be ignored).
  const expected = Buffer.from(mac(sessionId, payload));
  const got = Buffer.from(given);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return undefined;
  return parsePosition(Buffer.from(payload, 'base64url').toString('utf8'));
}
