import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { isAppError, type Logger } from '@workspace/platform';
import type { Change } from '@workspace/proto/workspace/files/v1/files';
import type { FilesClient } from '../../clients.js';
import { eventId, parsePosition, positionOfEventId, positionText, startOf, type Position } from './event-ids.js';
import type { SessionStore } from './sessions.redis.js';
import { SseWriter } from './sse-writer.js';
import { fileUri } from './uri.js';

/** How long one wait on the changes feed lasts; a keep-alive comment follows each empty one. */
const WAIT_MS = 10_000;
/** Changes read per step, and so the most a stream holds read ahead of its socket. */
const BATCH = 100;
const KEEP_ALIVE = ': keep-alive\n\n';
/** Clients of older revisions may not take an event without data (the SDK's server sends none to them either). */
const PRIMING_FROM = '2025-11-25';

export interface StreamDeps {
  files: FilesClient;
  sessions: SessionStore;
  logger: Logger;
  /** MCP_STREAM_STALL_MS: a socket that takes nothing of what waits for this long ends its stream. */
  stallMs: number;
}

export interface StreamIds {
  sessionId: string;
  userId: string;
  requestId: string;
  protocolVersion: string;
}

const below = (path: string, root: string) => path === root || path.startsWith(root === '/' ? '/' : `${root}/`);

/**
 * The URIs to notify for one change: its path (and a move's source) when at or below a
 * subscription; and a subscription's own, when the change is to a directory above it (a
 * recursive delete or move takes what was subscribed with it). Their order depends only on the
 * change and the subscriptions' order, which an event's id counts on.
 */
export function updatedUris(change: Pick<Change, 'path' | 'from' | 'kind'>, subscriptions: readonly string[]): string[] {
  const paths = change.from ? [change.from, change.path] : [change.path];
  const uris = paths.filter((p) => subscriptions.some((s) => below(p, s)));
  if (change.kind === 'directory') uris.push(...subscriptions.filter((s) => paths.some((p) => p !== s && below(s, p))));
  return [...new Set(uris)].map(fileUri);
}

/** The position after a read from `pos`: past its changes, or still ahead when it returned no more than `pos` skips. */
export function after(pos: Position, out: { changes: readonly unknown[]; cursor: string }): Position {
  const n = out.changes.length;
  return n > pos.changes ? startOf(out.cursor) : { cursor: out.cursor, changes: pos.changes - n, uris: pos.uris };
}

export const NOT_OURS = Symbol('not an event id of the session');

/**
 * Where a GET's Last-Event-ID resumes: none (an empty one is none, as EventSource sends none
 * before it has an id), its position, or NOT_OURS when the session's stream never sent it.
 */
export function resumeFrom(lastEventId: string | undefined, sessionId: string): Position | undefined | typeof NOT_OURS {
  if (!lastEventId) return undefined;
  return positionOfEventId(sessionId, lastEventId) ?? NOT_OURS;
}

/**
 * The session's GET stream (docs/api/mcp.md#subscriptions): `notifications/resources/updated`
 * for every change at or below a subscription, fed by the changes feed, each event with an id
 * from which a stream reopened with Last-Event-ID goes on (`resume`); without one, it goes on
 * from the position kept with the session in Redis. That position moves only past events
 * flushed to the socket, and only while this stream is the session's newest: a stream opened
 * later, on any replica, takes over from there.
 */
export async function serveUpdates(deps: StreamDeps, res: Response, ids: StreamIds, resume: Position | undefined): Promise<void> {
  const stop = new AbortController();
  res.once('close', () => stop.abort());
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'Mcp-Session-Id': ids.sessionId });
  res.flushHeaders();
  const writer = new SseWriter<Position>(res, deps.stallMs, () => deps.logger.info({ requestId: ids.requestId, stallMs: deps.stallMs }, 'mcp updates: the socket took none of the events waiting for it; stream closed'));
  const stream = new UpdatesStream(deps, ids, writer, stop.signal);
  try {
    await stream.run(resume);
  } catch (err) {
    if (!stop.signal.aborted) deps.logger.warn({ err, requestId: ids.requestId }, 'mcp updates stream ended');
  } finally {
    await stream.end().catch(() => undefined);
    res.end();
  }
}

class UpdatesStream {
  readonly #owner = randomUUID();
  /** The session's position as this stream last read or wrote it in Redis. */
  #stored: string | undefined;

  constructor(
    private readonly deps: StreamDeps,
    private readonly ids: StreamIds,
    private readonly writer: SseWriter<Position>,
    private readonly signal: AbortSignal,
  ) {}

  async run(resume: Position | undefined): Promise<void> {
    const { sessions } = this.deps;
    await sessions.claimStream(this.ids.sessionId, this.#owner);
    this.#stored = await sessions.cursor(this.ids.sessionId);
    // Resumed: the stored position is where the client says it is.
    if (resume && !(await this.#save(resume))) return;
    let pos = resume;
    let primed = false;
    while (!this.signal.aborted) {
      if ((await sessions.streamOwner(this.ids.sessionId)) !== this.#owner) return;
      pos ??= await this.#storedPosition();
      if (!pos) {
        // No subscription yet: nothing to follow.
        await waitOrStop(1_000, this.signal);
        if (!(await this.writer.write(KEEP_ALIVE))) return;
        continue;
      }
      if (!primed && !(await this.#prime(pos))) return;
      primed = true;
      const next = await this.#step(pos);
      if (!next) return;
      pos = next;
    }
  }

  /** The stored position moves past what was flushed of an unfinished step; then the stream is given up. */
  async end(): Promise<void> {
    const flushed = this.writer.take();
    try {
      if (flushed) await this.#save(flushed);
    } finally {
      await this.deps.sessions.releaseStream(this.ids.sessionId, this.#owner);
    }
  }

  async #storedPosition(): Promise<Position | undefined> {
    this.#stored = await this.deps.sessions.cursor(this.ids.sessionId);
    return this.#stored === undefined ? undefined : parsePosition(this.#stored);
  }

  /**
   * The stream's first event: the position it starts from as an id, and no message, so a client
   * that reads nothing else still has a Last-Event-ID to come back with.
   */
  async #prime(pos: Position): Promise<boolean> {
    if (this.ids.protocolVersion < PRIMING_FROM) return true;
    return this.writer.write(`id: ${eventId(this.ids.sessionId, pos)}\ndata: \n\n`);
  }

  /** Reads the changes after `pos` and writes what they notify; the position after them, or undefined to stop. */
  async #step(pos: Position): Promise<Position | undefined> {
    const out = await this.#read(pos.cursor);
    if (out === 'stop') return undefined;
    if (out === 'retry') return pos;
    if (out === 'expired') return this.#restart();
    // Read after the wait, so a subscription made during it applies to what it returned; sorted,
    // so that each change's notifications come in the same order whenever they are read again.
    const subscriptions = out.changes.length > pos.changes ? (await this.deps.sessions.subscriptions(this.ids.sessionId)).sort() : [];
    for (let i = pos.changes; i < out.changes.length; i++) {
      const uris = updatedUris(out.changes[i]!, subscriptions);
      for (let j = i === pos.changes ? pos.uris : 0; j < uris.length; j++) {
        const at = { cursor: pos.cursor, changes: i, uris: j + 1 };
        if (!(await this.writer.write(this.#event(at, { method: 'notifications/resources/updated', params: { uri: uris[j] } }), at))) return undefined;
      }
    }
    if (!out.changes.length && !(await this.writer.write(KEEP_ALIVE))) return undefined;
    return this.#delivered(after(pos, out));
  }

  /** Once the socket took everything written, `pos` is stored as the session's; undefined when the stream ended first. */
  async #delivered(pos: Position): Promise<Position | undefined> {
    if (!(await this.writer.idle())) return undefined;
    this.writer.take();
    return (await this.#save(pos)) ? pos : undefined;
  }

  async #read(cursor: string) {
    const call = { userId: this.ids.userId, requestId: this.ids.requestId, signal: this.signal, deadlineMs: WAIT_MS + 5_000 };
    try {
      return await this.deps.files.getChanges({ cursor, limit: BATCH, timeoutMs: WAIT_MS }, call);
    } catch (err) {
      if (this.signal.aborted) return 'stop';
      if (isAppError(err) && err.code === 'CURSOR_EXPIRED') return 'expired';
      const invalid = isAppError(err) && err.code === 'INVALID_ARGUMENT';
      this.deps.logger.warn({ err, requestId: this.ids.requestId }, invalid ? 'mcp updates: the changes feed refuses the position; stream closed' : 'mcp updates: the changes feed failed; retrying');
      // A cursor the feed refuses (only a forged id holds one) will never be read.
      if (invalid) return 'stop';
      await waitOrStop(1_000, this.signal);
      return 'retry';
    }
  }

  /** Older than the history: the client lists again, and the stream goes on from the newest position. */
  async #restart(): Promise<Position | undefined> {
    const { cursor } = await this.deps.files.getChangesCursor({ path: '/files' }, { userId: this.ids.userId, requestId: this.ids.requestId });
    const fresh = startOf(cursor);
    if (!(await this.writer.write(this.#event(fresh, { method: 'notifications/resources/list_changed' }), fresh))) return undefined;
    return this.#delivered(fresh);
  }

  #event(at: Position, message: { method: string; params?: unknown }): string {
    return `id: ${eventId(this.ids.sessionId, at)}\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`;
  }

  /** Stores `pos` as the session's position, only while this stream holds the session and nothing moved it meanwhile. */
  async #save(pos: Position): Promise<boolean> {
    const text = positionText(pos);
    if (text === this.#stored) return true;
    // None: the session ended (or never subscribed, and so never had an event to resume after).
    if (this.#stored === undefined) return false;
    if (!(await this.deps.sessions.advance(this.ids.sessionId, this.#owner, this.#stored, text))) return false;
    this.#stored = text;
    return true;
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
