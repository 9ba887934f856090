import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createRedis, userTag, type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fileUri } from '../services/gateway/src/features/mcp/uri.js';
import { mcpPost } from './support/mcp.js';
import { openRawStream, type RawStream } from './support/sse.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

/**
 * The session's GET stream when its client stops reading (docs/api/mcp.md#subscriptions): the
 * socket fills, the gateway holds no more than a bounded buffer, ends a stream whose socket takes
 * nothing for MCP_STREAM_STALL_MS, and a stream reopened with Last-Event-ID continues right after
 * that event. A stack of its own: its gateway's memory is this suite's alone, and its streams
 * stall after 3 s instead of 30.
 */
const STALL_MS = 3_000;
const MiB = 1024 * 1024;
let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  stack = await startStack({ gatewayEnv: { MCP_STREAM_STALL_MS: String(STALL_MS) } });
  const infra = inject('infra');
  redis = createRedis({ url: infra.redisUrl, cluster: infra.redisCluster ?? false, name: 'mcp-stream-e2e' });
});
afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

/** 200 bytes that take 600 in a URI: notifications of ~2 KB, so that a few hundred fill a socket. */
const LONG = 'é'.repeat(100);
const dirPath = (root: string, i: number) => `${root}/${LONG}/${LONG}/${LONG}-${i}`;

/** A session opened by hand (protocol 2025-11-25), subscribed to `watched`. */
async function openSession(u: ApiUser, watched: string | string[]): Promise<string> {
  const auth = { authorization: `Bearer ${u.token}` };
  const init = await mcpPost(stack.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, auth);
  expect(init.status).toBe(200);
  const sessionId = init.headers.get('mcp-session-id')!;
  for (const path of [watched].flat()) {
    const sub = await mcpPost(stack.url, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: fileUri(path) } }, { ...auth, 'mcp-session-id': sessionId });
    expect(sub.status, await sub.clone().text()).toBe(200);
  }
  return sessionId;
}

async function mkdir(baseUrl: string, u: ApiUser, path: string): Promise<void> {
  const res = await fetch(`${baseUrl}/v1/agent/files/directories`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ path }) });
  expect(res.status, await res.text()).toBe(201);
}

/** Creates each folder in turn (one change each, in this order), through `baseUrl`; their URIs. */
async function mkdirs(baseUrl: string, u: ApiUser, paths: string[]): Promise<string[]> {
  for (const path of paths) await mkdir(baseUrl, u, path);
  return paths.map(fileUri);
}

/** The URIs of the changes after `cursor`, in commit order, as the changes feed gives them over HTTP. */
async function committed(u: ApiUser, cursor: string): Promise<string[]> {
  const uris: string[] = [];
  for (let page = { hasMore: true, cursor }; page.hasMore; ) {
    const res = await u.request('GET', `/v1/agent/files/changes?cursor=${encodeURIComponent(page.cursor)}&limit=1000`);
    expect(res.status, res.text).toBe(200);
    uris.push(...(res.body.changes as { path: string }[]).map((c) => fileUri(c.path)));
    page = res.body;
  }
  return uris;
}

/** The session's position in the changes feed, as the gateway keeps it in Redis. */
const storedPosition = (sessionId: string) => redis.get(`mcp:{${sessionId}}:cursor`);
/** Whether a GET stream of the session is open on some replica. */
const streamOpen = async (sessionId: string) => (await redis.exists(`mcp:{${sessionId}}:stream`)) === 1;

/** A stream's first event: an id with no message, the position the stream started from. */
async function opened(stream: RawStream): Promise<string> {
  expect(stream.status).toBe(200);
  await expect.poll(() => stream.events.length, { timeout: 10_000 }).toBeGreaterThan(0);
  expect(stream.events[0]).toMatchObject({ data: '', id: expect.stringMatching(/^[A-Za-z0-9_.-]+$/) });
  return stream.events[0]!.id!;
}

/**
 * Makes one more change and waits for it: what a stream received before it is all it will
 * receive of what came before, so a duplicate or a late event would be in `updates()` by then.
 */
async function settle(u: ApiUser, stream: RawStream, root: string): Promise<void> {
  const [marker] = await mkdirs(stack.url, u, [`${root}/settled`]);
  await expect.poll(() => stream.updates().at(-1), { timeout: 30_000 }).toBe(marker);
}

describe('mcp stream — a client that stops reading', () => {
  it('mcp stream — 100 changes while the client reads nothing: reopened with the Last-Event-ID of the stream\'s first event, it gets all 100, in commit order, none twice', async () => {
    const u = await stack.user();
    const sid = await openSession(u, '/files/w');
    const first = await openRawStream(stack.url, u.token, sid);
    const start = await opened(first);
    first.pause();
    const before = await storedPosition(sid);
    const uris = await mkdirs(stack.url, u, Array.from({ length: 100 }, (_, i) => dirPath('/files/w', i)));
    // The gateway wrote what the socket took: the stored position moved past events never read.
    await expect.poll(() => storedPosition(sid), { timeout: 30_000 }).not.toBe(before);
    expect(first.updates()).toEqual([]);
    first.destroy();
    const again = await openRawStream(stack.url, u.token, sid, { lastEventId: start });
    await opened(again);
    await settle(u, again, '/files/w');
    expect(again.updates()).toEqual([...uris, fileUri('/files/w/settled')]);
    again.destroy();
  });

  it('mcp stream — the client read 30 of 100 and stopped, then its connection broke: reopened with the 30th\'s id it gets the other 70, none twice; every event\'s id differs', async () => {
    const u = await stack.user();
    const sid = await openSession(u, '/files/w');
    const first = await openRawStream(stack.url, u.token, sid, { pauseAfterUpdates: 30 });
    await opened(first);
    const uris = await mkdirs(stack.url, u, Array.from({ length: 100 }, (_, i) => dirPath('/files/w', i)));
    await expect.poll(() => first.updates().length, { timeout: 30_000 }).toBe(30);
    expect(first.updates()).toEqual(uris.slice(0, 30));
    const ids = first.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    first.destroy();
    const again = await openRawStream(stack.url, u.token, sid, { lastEventId: first.lastId()! });
    await opened(again);
    await settle(u, again, '/files/w');
    expect(again.updates()).toEqual([...uris.slice(30), fileUri('/files/w/settled')]);
    again.destroy();
  });

  it('mcp stream — a Last-Event-ID that is not one of the session\'s (made up, altered, another session\'s) → 400 with a JSON-RPC body, and the session\'s position is untouched', async () => {
    const u = await stack.user();
    const [sid, other] = [await openSession(u, '/files/a'), await openSession(u, '/files/a')];
    const theirs = await openRawStream(stack.url, u.token, other);
    const theirId = await opened(theirs);
    theirs.destroy();
    const ours = await openRawStream(stack.url, u.token, sid);
    const ourId = await opened(ours);
    ours.destroy();
    await expect.poll(() => streamOpen(sid)).toBe(false);
    const position = await storedPosition(sid);
    const flipped = `${ourId.slice(0, -1)}${ourId.endsWith('A') ? 'B' : 'A'}`;
    const payload = ourId.split('.')[0]!;
    const altered = `${payload.slice(0, 4)}${payload[4] === 'x' ? 'y' : 'x'}${payload.slice(5)}.${ourId.split('.')[1]}`;
    for (const lastEventId of ['made-up', flipped, altered, theirId, `${ourId}.x`, 'é']) {
      const refused = await openRawStream(stack.url, u.token, sid, { lastEventId });
      expect(refused.status, lastEventId).toBe(400);
      expect(refused.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('Last-Event-ID') }, id: null });
    }
    expect(await storedPosition(sid)).toBe(position);
    // The session's own id is still good.
    const resumed = await openRawStream(stack.url, u.token, sid, { lastEventId: ourId });
    expect(await opened(resumed)).toBe(ourId);
    resumed.destroy();
  });
});

describe('mcp stream — history', () => {
  it('mcp stream — a position older than the retained history: list_changed, with an id, and the stream goes on from the newest position; the old id again is told the same', async () => {
    const u = await stack.user();
    const sid = await openSession(u, '/files/x');
    const first = await openRawStream(stack.url, u.token, sid);
    const start = await opened(first);
    first.destroy();
    await expect.poll(() => streamOpen(sid)).toBe(false);
    await mkdirs(stack.url, u, ['/files/x/a', '/files/x/b']);
    // The history keeps 7 days and 100,000 changes; here all but the newest change go, by hand,
    // with XDEL: the feed tells an expired position by the stream's max-deleted-entry-id, which
    // Redis 7.0's XTRIM leaves alone.
    const [log] = await redis.keys(`${userTag(u.sub)}:fs:*:log`);
    const ids = ((await redis.xrange(log!, '-', '+')) as [string, string[]][]).map(([id]) => id);
    expect(await redis.xdel(log!, ...ids.slice(0, -1))).toBe(ids.length - 1);
    const listChanged = (s: RawStream) => s.events.filter((e) => e.data.includes('"notifications/resources/list_changed"'));
    const again = await openRawStream(stack.url, u.token, sid);
    await opened(again);
    await expect.poll(() => listChanged(again).length, { timeout: 30_000 }).toBe(1);
    expect(JSON.parse(listChanged(again)[0]!.data)).toEqual({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
    expect(listChanged(again)[0]!.id).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    await settle(u, again, '/files/x');
    expect(again.updates()).toEqual([fileUri('/files/x/settled')]);
    expect(listChanged(again)).toHaveLength(1);
    again.destroy();
    const old = await openRawStream(stack.url, u.token, sid, { lastEventId: start });
    await expect.poll(() => listChanged(old).length, { timeout: 30_000 }).toBe(1);
    old.destroy();
  });
});

/** /proc/<pid>/status VmRSS (Linux). */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

/** Folders created and deleted over and over; below each, three subscriptions of ~2 KB URIs. */
const WORKERS = 4;
const deep = (w: number) => [0, 1, 2].map((k) => `/files/s/t${w}/${LONG}/${LONG}/${LONG}-${k}`);
const WATCHED = ['/files/s', ...Array.from({ length: WORKERS }, (_, w) => deep(w)).flat()];

/** `rounds` times, each worker creates its folder and deletes it: two changes a round, each notifying 4 URIs (~7 KB). */
async function churn(baseUrl: string, u: ApiUser, rounds: number): Promise<void> {
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      for (let r = 0; r < rounds; r++) {
        await mkdir(baseUrl, u, `/files/s/t${w}`);
        const res = await fetch(`${baseUrl}/v1/agent/files?path=${encodeURIComponent(`/files/s/t${w}`)}&recursive=true`, { method: 'DELETE', headers: { authorization: `Bearer ${u.token}` } });
        expect(res.status, await res.text()).toBe(200);
      }
    }),
  );
}

/** What a session subscribed to WATCHED is told of the changes after `cursor`, in commit order (the feed's, over HTTP). */
async function notified(u: ApiUser, cursor: string): Promise<string[]> {
  return (await committed(u, cursor)).flatMap((uri) => [uri, ...deep(Number(/\/t(\d+)$/.exec(uri)![1])).map(fileUri)]);
}

describe('mcp stream — bounded memory', () => {
  it('mcp stream — 5 sessions that never read while 1,520 changes happen: the gateway ends their streams and its RSS peaks less than 32 MiB higher; reopened, one with Last-Event-ID gets every notification, one without the rest its socket never took', async () => {
    const u = await stack.user();
    const pid = stack.services.gateway!.child.pid!;
    // The changes come through another gateway: the one measured only serves the streams.
    const writer = await stack.extraGateway({});
    try {
      await mkdir(writer.url, u, '/files/s');
      // Warm: sessions that read take the gateway through the same work first (its heap grows to it once).
      const readers = await Promise.all(Array.from({ length: 5 }, async () => openRawStream(stack.url, u.token, await openSession(u, WATCHED))));
      await Promise.all(readers.map(opened));
      await churn(writer.url, u, 20);
      for (const r of readers) await expect.poll(() => r.updates().length, { timeout: 30_000 }).toBe(20 * 2 * WORKERS * 4);
      readers.forEach((r) => r.destroy());
      const sessions = await Promise.all(Array.from({ length: 5 }, () => openSession(u, WATCHED)));
      const streams = await Promise.all(sessions.map((sid) => openRawStream(stack.url, u.token, sid)));
      const starts = await Promise.all(streams.map(opened));
      streams.forEach((s) => s.pause());
      const cursor = (await u.request('GET', '/v1/agent/files/changes/cursor?path=/files')).body.cursor as string;
      const heap = async () => (await stack.metricsOf('gateway')).split('\n').filter((l) => /^(nodejs_heap_size|nodejs_external|process_resident|nodejs_heap_space_size_used_bytes)/.test(l)).join(' | ');
      console.log('HEAP before', await heap());
      const baseline = rss(pid);
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 50);
      try {
        await churn(writer.url, u, 190);
        // Each stream is ended once its socket has taken nothing for STALL_MS.
        for (const sid of sessions) await expect.poll(() => streamOpen(sid), { timeout: 30_000 + STALL_MS }).toBe(false);
      } finally {
        clearInterval(sampler);
      }
      // Before the bounds: +59 MiB, held as long as the streams (never ended). Now what the
      // streams' work leaves is garbage, given back whenever V8 next collects it whole.
      console.log(`gateway RSS: ${(baseline / MiB).toFixed(1)} MiB → peak ${(peak / MiB).toFixed(1)} MiB; ${(rss(pid) / MiB).toFixed(1)} MiB once the streams ended`);
      expect(peak - baseline).toBeLessThan(32 * MiB);
      // Reading again, each client finds its response cut.
      for (const s of streams) s.resume();
      await Promise.all(streams.map((s) => s.closed));
      const all = await notified(u, cursor);
      expect(all).toHaveLength(190 * 2 * WORKERS * 4);
      const withId = await openRawStream(stack.url, u.token, sessions[0]!, { lastEventId: starts[0]! });
      const withoutId = await openRawStream(stack.url, u.token, sessions[1]!);
      await opened(withId);
      await opened(withoutId);
      const [marker] = await mkdirs(stack.url, u, ['/files/s/settled']);
      await expect.poll(() => withId.updates().at(-1), { timeout: 60_000 }).toBe(marker);
      await expect.poll(() => withoutId.updates().at(-1), { timeout: 60_000 }).toBe(marker);
      expect(withId.updates()).toEqual([...all, marker]);
      // Without an id: after what the socket took (never read), never before it, none twice.
      const rest = withoutId.updates().slice(0, -1);
      expect(rest.length).toBeGreaterThan(0);
      expect(rest.length).toBeLessThan(all.length);
      expect(rest).toEqual(all.slice(all.length - rest.length));
      withId.destroy();
      withoutId.destroy();
    } finally {
      await writer.stop();
    }
  }, 240_000);
});

/**
 * A fetch for the SDK client whose GET stream the test can hold (what arrives from then on is
 * kept from the client) and cut (what was held is lost, the connection dropped), as a network
 * would; it notes each GET's Last-Event-ID and the id of the last event it let through.
 */
function cuttableFetch() {
  const gets: (string | null)[] = [];
  let lastPassedId: string | undefined;
  let current: { hold(): void; held(): string; cut(): void } | undefined;
  const fetchFn = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    if ((init?.method ?? 'GET') !== 'GET') return fetch(input, init);
    gets.push(new Headers(init?.headers).get('last-event-id'));
    const abort = new AbortController();
    init?.signal?.addEventListener('abort', () => abort.abort(), { once: true });
    const res = await fetch(input, { ...init, signal: abort.signal });
    const decoder = new TextDecoder();
    let holding = false;
    let held = '';
    let passed = '';
    const body = res.body!.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          const text = decoder.decode(chunk, { stream: true });
          if (holding) return void (held += text);
          passed += text;
          for (const m of passed.matchAll(/(?:^|\n)id: ([^\n]*)\n/g)) lastPassedId = m[1];
          passed = passed.slice(passed.lastIndexOf('\n') + 1);
          controller.enqueue(chunk);
        },
      }),
    );
    current = { hold: () => (holding = true), held: () => held, cut: () => abort.abort() };
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { fetch: fetchFn, gets, lastPassedId: () => lastPassedId, hold: () => current!.hold(), held: () => current!.held(), cut: () => current!.cut() };
}

describe('mcp stream — the SDK client', () => {
  it('mcp stream — the SDK client\'s stream is cut with events unread: it reconnects with Last-Event-ID and receives every notification once, in order', async () => {
    const u = await stack.user();
    const net = cuttableFetch();
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${u.token}` } },
      fetch: net.fetch,
      reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 50 },
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' }, { capabilities: {} });
    const seen: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.push(n.params.uri));
    await client.connect(transport);
    try {
      await client.subscribeResource({ uri: 'workspace:///files/sdk' });
      await expect.poll(() => net.gets.length).toBe(1);
      expect(net.gets[0]).toBeNull();
      const uris = await mkdirs(stack.url, u, Array.from({ length: 5 }, (_, i) => `/files/sdk/a${i}`));
      await expect.poll(() => seen.length, { timeout: 30_000 }).toBe(5);
      net.hold();
      uris.push(...(await mkdirs(stack.url, u, Array.from({ length: 20 }, (_, i) => dirPath('/files/sdk', i)))));
      // All 20 reached the client's machine, and none the client: then the network drops them.
      const last = JSON.stringify(uris.at(-1)).slice(1, -1);
      await expect.poll(() => net.held().includes(last), { timeout: 30_000 }).toBe(true);
      const lastSeen = net.lastPassedId();
      net.cut();
      await expect.poll(() => net.gets.length, { timeout: 30_000 }).toBe(2);
      expect(net.gets[1]).toBe(lastSeen);
      uris.push(...(await mkdirs(stack.url, u, ['/files/sdk/after'])));
      await expect.poll(() => seen.at(-1), { timeout: 30_000 }).toBe(fileUri('/files/sdk/after'));
      expect(seen).toEqual(uris);
    } finally {
      await client.close();
    }
  });
});
