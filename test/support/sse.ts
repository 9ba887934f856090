import { request, type ClientRequest, type IncomingMessage } from 'node:http';

/** One dispatched SSE event (as EventSource and the SDK's parser see it: at least one `data` line). */
export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/**
 * A session's GET stream read by hand over node:http, so that a test decides when the client
 * stops reading: a paused response stops taking bytes from its socket, and the socket fills up
 * to the gateway, as with a client that is busy or gone.
 */
export interface RawStream {
  status: number;
  /** A refused stream's body (the transport's JSON-RPC error), parsed. */
  body: unknown;
  events: SseEvent[];
  /** The URIs of the `notifications/resources/updated` events so far, in order. */
  updates(): string[];
  /** The id of the last event read (the stream's first event carries one, with no message). */
  lastId(): string | undefined;
  /** Stops reading: nothing more is parsed, and the socket is left to fill. */
  pause(): void;
  /** Reads (and parses) again. */
  resume(): void;
  /** Resolves when the response ends or is cut (by either side). */
  closed: Promise<void>;
  destroy(): void;
}

export interface RawStreamOptions {
  lastEventId?: string;
  /** Stop reading (as pause()) right after this many updates have been read. */
  pauseAfterUpdates?: number;
}

export function openRawStream(baseUrl: string, token: string, sessionId: string, options: RawStreamOptions = {}): Promise<RawStream> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(`${baseUrl}/v1/mcp`, { headers }, (res) => void readStream(req, res, options).then(resolve, reject));
    req.on('error', reject);
    req.end();
  });
}

async function readStream(req: ClientRequest, res: IncomingMessage, options: RawStreamOptions): Promise<RawStream> {
  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  const status = res.statusCode ?? 0;
  const events: SseEvent[] = [];
  const uris: string[] = [];
  const updates = () => [...uris];
  let paused = false;
  const pause = () => {
    paused = true;
    res.pause();
  };
  const resume = () => {
    paused = false;
    res.resume();
  };
  const destroy = () => {
    req.destroy();
    res.destroy();
  };
  if (status !== 200) {
    let text = '';
    for await (const chunk of res) text += String(chunk);
    return { status, body: text ? (JSON.parse(text) as unknown) : undefined, events, updates, lastId: () => undefined, pause, resume, closed, destroy };
  }
  let buffered = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    if (paused) return;
    buffered += chunk;
    let end: number;
    while (!paused && (end = buffered.indexOf('\n\n')) >= 0) {
      const event = parseEvent(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (!event) continue;
      events.push(event);
      const message = event.data ? (JSON.parse(event.data) as { method?: string; params?: { uri?: string } }) : {};
      if (message.method === 'notifications/resources/updated') uris.push(message.params!.uri!);
      if (options.pauseAfterUpdates !== undefined && uris.length >= options.pauseAfterUpdates) pause();
    }
  });
  res.on('error', () => undefined);
  return { status, body: undefined, events, updates, lastId: () => events.findLast((e) => e.id !== undefined)?.id, pause, resume, closed, destroy };
}

/** An event block's fields; undefined for one without data (a comment, a keep-alive). */
function parseEvent(block: string): SseEvent | undefined {
  let id: string | undefined;
  let event: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length ? { id, event, data: data.join('\n') } : undefined;
}
