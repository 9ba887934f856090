import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { isAppError, type Logger } from '@workspace/platform';
import type { Change } from '@workspace/proto/workspace/files/v1/files';
import type { FilesClient } from '../../clients.js';
import type { SessionStore } from './sessions.redis.js';
import { fileUri } from './uri.js';

/** How long one wait on the changes feed lasts; a keep-alive comment follows each empty one. */
const WAIT_MS = 10_000;
const BATCH = 1_000;

export interface StreamDeps {
  files: FilesClient;
  sessions: SessionStore;
  logger: Logger;
}

const below = (path: string, root: string) => path === root || path.startsWith(root === '/' ? '/' : `${root}/`);

/**
 * The URIs to notify for one change: its path (and a move's source) when at or below a
 * subscription; and a subscription's own, when the change is to a directory above it (a
 * recursive delete or move takes what was subscribed with it).
 */
export function updatedUris(change: Pick<Change, 'path' | 'from' | 'kind'>, subscriptions: readonly string[]): string[] {
  const paths = change.from ? [change.from, change.path] : [change.path];
  const uris = paths.filter((p) => subscriptions.some((s) => below(p, s)));
  if (change.kind === 'directory') uris.push(...subscriptions.filter((s) => paths.some((p) => p !== s && below(s, p))));
  return [...new Set(uris)].map(fileUri);
}

/**
 * The session's GET stream (docs/api/mcp.md#subscriptions): `notifications/resources/updated`
 * for every change at or below a subscription, fed by the changes feed from the cursor the
 * session keeps in Redis. The cursor moves only after what it passed was written, and only while
 * this stream is the session's newest: a stream opened later, on any replica, takes over from
 * there, so nothing is missed or sent twice.
 */
export async function serveUpdates(deps: StreamDeps, res: Response, ids: { sessionId: string; userId: string; requestId: string }): Promise<void> {
  const owner = randomUUID();
  const stop = new AbortController();
  res.once('close', () => stop.abort());
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'Mcp-Session-Id': ids.sessionId });
  res.flushHeaders();
  await deps.sessions.claimStream(ids.sessionId, owner);
  const send = (message: unknown) => res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  try {
    while (!stop.signal.aborted) {
      if ((await deps.sessions.streamOwner(ids.sessionId)) !== owner) break;
      const cursor = await deps.sessions.cursor(ids.sessionId);
      if (!cursor) {
        // No subscription yet: nothing to follow.
        await waitOrStop(1_000, stop.signal);
        res.write(': keep-alive\n\n');
        continue;
      }
      let out;
      try {
        out = await deps.files.getChanges({ cursor, limit: BATCH, timeoutMs: WAIT_MS }, { userId: ids.userId, requestId: ids.requestId, signal: stop.signal, deadlineMs: WAIT_MS + 5_000 });
      } catch (err) {
        if (stop.signal.aborted) break;
        if (isAppError(err) && err.code === 'CURSOR_EXPIRED') {
          // Older than the history: the client lists again.
          send({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
          break;
        }
        deps.logger.warn({ err, requestId: ids.requestId }, 'mcp updates: the changes feed failed; retrying');
        await waitOrStop(1_000, stop.signal);
        continue;
      }
      // Read after the wait, so a subscription made during it applies to what it returned.
      const subscriptions = out.changes.length ? await deps.sessions.subscriptions(ids.sessionId) : [];
      for (const change of out.changes) {
        for (const uri of updatedUris(change, subscriptions)) send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
      }
      if (!out.changes.length) res.write(': keep-alive\n\n');
      if (out.cursor !== cursor && !(await deps.sessions.advance(ids.sessionId, owner, cursor, out.cursor))) break;
    }
  } catch (err) {
    if (!stop.signal.aborted) deps.logger.warn({ err, requestId: ids.requestId }, 'mcp updates stream ended');
  } finally {
    await deps.sessions.releaseStream(ids.sessionId, owner).catch(() => undefined);
    res.end();
  }
}

function waitOrStop(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
