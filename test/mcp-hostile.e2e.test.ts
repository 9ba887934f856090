import { setTimeout as sleep } from 'node:timers/promises';
import { createRedis, type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { list } from './support/files-api.js';
import { MAX_SESSIONS_PER_USER } from '../services/gateway/src/features/mcp/sessions.redis.js';
import { mcpPost } from './support/mcp.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

/**
 * /v1/mcp against a broken or malicious client, sent by hand: what the SDK client never sends.
 * A stack of its own, so that its gateway's logs and memory are this suite's alone.
 */
const BURST = 2_000;
let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  // The default refill (the test kit's is unlimited), with a bucket large enough for the suite's
  // batches of 100 (the rate limit test empties it on purpose).
  stack = await startStack({ gatewayEnv: { RATE_LIMIT_PER_SECOND: '50', RATE_LIMIT_BURST: String(BURST) } });
  const infra = inject('infra');
  redis = createRedis({ url: infra.redisUrl, cluster: infra.redisCluster ?? false, name: 'mcp-hostile-e2e' });
});
afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const call = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });

interface Answer {
  status: number;
  sessionId: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON-RPC bodies of any shape
  body: any;
}

async function send(u: ApiUser, sessionId: string | undefined, payload: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await mcpPost(stack.url, payload, { authorization: `Bearer ${u.token}`, ...(sessionId && { 'mcp-session-id': sessionId }), ...headers });
  const text = await res.text();
  return { status: res.status, sessionId: res.headers.get('mcp-session-id'), body: text ? JSON.parse(text) : undefined };
}

async function open(u: ApiUser): Promise<string> {
  const res = await send(u, undefined, INIT);
  expect(res.status).toBe(200);
  return res.sessionId!;
}

/** A transport refusal: the status, and a JSON-RPC error body with id null. */
function refused(res: Answer, status: number, code: number): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code }, id: null });
}

/** The user's files, their Home project's folder aside. */
const filesOf = async (u: ApiUser) => (await list(u, '/files', { recursive: true })).map((e) => e.path).filter((p) => !p.startsWith('/files/projects'));

/** Every node that holds keys (one, or the masters of a cluster). */
function nodes(): RedisClient[] {
  return 'nodes' in redis ? redis.nodes('master') : [redis];
}

/** The ids of the sessions stored for `sub`, whatever opened them. */
async function sessionsOf(sub: string): Promise<string[]> {
  const ids: string[] = [];
  for (const node of nodes()) {
    for (const key of await node.keys('mcp:{*}:session')) {
      const raw = await node.get(key);
      if (raw && (JSON.parse(raw) as { userId: string }).userId === sub) ids.push(key.slice('mcp:{'.length, -'}:session'.length));
    }
  }
  return ids;
}

const gatewayRss = async (): Promise<number> =>
  (await stack.metricsOf('gateway'))
    .split('\n')
    .filter((l) => l.startsWith('process_resident_memory_bytes'))
    .reduce((max, l) => Math.max(max, Number(l.split(' ').pop())), 0);

describe('mcp hostile — the body', () => {
  it('mcp hostile — nesting past 64 levels, invalid UTF-8, a lone surrogate or 1e309 → 400 -32700; nothing stored, no session opened', async () => {
    const u = await stack.user();
    const sid = await open(u);
    // Capabilities 100,000 levels deep were kept with the session: the store could not write them (503).
    const deepInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"a","version":"1"},"capabilities":{"experimental":{"x":${nested(100_000)}}}}}`;
    const deep = await send(u, undefined, deepInit);
    refused(deep, 400, -32700);
    expect(deep.sessionId).toBeNull();
    // Refused before its end, a body is left unread, so its connection is closed: the next request
    // fetch sent on it (the 1e309 one) hung, never answered.
    refused(await send(u, sid, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":${nested(65)}}}}`), 400, -32700);
    refused(await send(u, sid, '{"jsonrpc":"2.0","id":1e309,"method":"ping"}'), 400, -32700);
    // Bytes that are not UTF-8 were stored as U+FFFD, and answered as a success.
    const bytes = Buffer.from(JSON.stringify(call('write_file', { path: '/files/u.txt', content: 'AB' })));
    bytes[bytes.indexOf('AB')] = 0xff;
    const raw = await fetch(`${stack.url}/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.token}`, 'mcp-session-id': sid, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: bytes,
    });
    refused({ status: raw.status, sessionId: null, body: await raw.json() }, 400, -32700);
    // A lone surrogate in a path or in content: written as U+FFFD, a file the client never named.
    refused(await send(u, sid, call('write_file', { path: '/files/\ud800.txt', content: 'x' })), 400, -32700);
    refused(await send(u, sid, call('write_file', { path: '/files/s.txt', content: 'a\udc00b' })), 400, -32700);
    refused(await send(u, sid, { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'workspace:///files/\ud800' } }), 400, -32700);
    expect(await filesOf(u)).toEqual([]);
    expect(await sessionsOf(u.sub)).toEqual([sid]);
  });

  it('mcp hostile — a charset other than UTF-8 → 415', async () => {
    const u = await stack.user();
    const sid = await open(u);
    refused(await send(u, sid, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-type': 'application/json; charset=latin1' }), 415, -32000);
    expect((await send(u, sid, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-type': 'application/json; charset=UTF-8' })).status).toBe(200);
  });

  it('mcp hostile — 48 MB of tiny values is refused before it is parsed (413), in bounded memory; the gateway serves on', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const before = await gatewayRss();
    // Parsed whole, this took the gateway from ~150 MB to ~1.3 GB and a minute of CPU.
    const flood = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":[${'[],'.repeat(16_000_000)}[]]}}}`;
    refused(await send(u, sid, flood), 413, -32000);
    expect(await gatewayRss()).toBeLessThan(before + 256 * 1024 * 1024);
    expect((await send(u, sid, { jsonrpc: '2.0', id: 2, method: 'ping' })).body).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  }, 120_000);

  it('mcp hostile — batches: 101 messages → 400; an empty one → 202; 100 pings answered by id', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    refused(await send(u, sid, Array.from({ length: 101 }, (_, i) => ping(i))), 400, -32600);
    expect((await send(u, sid, [])).status).toBe(202);
    const hundred = await send(u, sid, Array.from({ length: 100 }, (_, i) => ping(i)));
    expect(hundred.status).toBe(200);
    expect((hundred.body as { id: number }[]).map((r) => r.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});

describe('mcp hostile — sessions', () => {
  it('mcp hostile — an initialize the transport refuses (in a batch, without an id, without jsonrpc) → 400 and leaves no session', async () => {
    const u = await stack.user();
    const { id: _id, ...notification } = INIT;
    const { jsonrpc: _jsonrpc, ...bare } = INIT;
    refused(await send(u, undefined, [INIT, { jsonrpc: '2.0', id: 2, method: 'ping' }]), 400, -32600);
    refused(await send(u, undefined, [INIT, { ...INIT, id: 2 }]), 400, -32600);
    refused(await send(u, undefined, notification), 400, -32600);
    refused(await send(u, undefined, bare), 400, -32600);
    expect(await sessionsOf(u.sub)).toEqual([]);
    // Bad params, in a session or not: the SDK's own handler answered -32603 with zod's text.
    const sid = await open(u);
    for (const params of [{ ...INIT.params, protocolVersion: 5 }, { protocolVersion: '2025-06-18' }, null]) {
      for (const session of [sid, undefined]) refused(await send(u, session, { ...INIT, params }), 400, -32602);
    }
    expect(await sessionsOf(u.sub)).toEqual([sid]);
  });

  it('mcp hostile — clientInfo of 10 MB → 400 -32602 and no session (it would be kept in Redis for a day and read back by every request)', async () => {
    const u = await stack.user();
    refused(await send(u, undefined, { ...INIT, params: { ...INIT.params, clientInfo: { name: 'x'.repeat(10_000_000), version: '1' } } }), 400, -32602);
    refused(await send(u, undefined, { ...INIT, params: { ...INIT.params, capabilities: { experimental: { x: { y: 'y'.repeat(65 * 1024) } } } } }), 400, -32602);
    expect(await sessionsOf(u.sub)).toEqual([]);
    // An ordinary client's facts fit.
    expect((await send(u, undefined, { ...INIT, params: { ...INIT.params, clientInfo: { name: 'n'.repeat(1000), version: '1', title: 't'.repeat(1000) } } })).status).toBe(200);
  });

  it('mcp hostile — DELETE leaves no key of the session (subscriptions, cursor, stream); another user cannot DELETE it; later requests are 404', async () => {
    const u = await stack.user();
    const other = await stack.user();
    const sid = await open(u);
    expect((await send(u, sid, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'workspace:///files/a' } })).body.result).toEqual({});
    const streamHeaders = { authorization: `Bearer ${u.token}`, accept: 'text/event-stream', 'mcp-session-id': sid };
    // A Last-Event-ID the session's stream never sent opens no stream (docs/api/mcp.md#subscriptions).
    const garbage = await fetch(`${stack.url}/v1/mcp`, { headers: { ...streamHeaders, 'last-event-id': 'garbage %% 99999999999999999999' } });
    refused({ status: garbage.status, sessionId: null, body: await garbage.json() }, 400, -32000);
    const stream = await fetch(`${stack.url}/v1/mcp`, { headers: streamHeaders });
    expect(stream.status).toBe(200);
    const keys = ['session', 'subs', 'cursor', 'stream'].map((part) => `mcp:{${sid}}:${part}`);
    await expect.poll(() => redis.exists(...keys)).toBe(4);
    const del = (token: string) => fetch(`${stack.url}/v1/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sid } });
    const theirs = await del(other.token);
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toMatchObject({ error: { code: -32001 } });
    expect((await send(u, sid, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(200);
    expect((await del(u.token)).status).toBe(200);
    // The open stream notices within one wait of the changes feed and ends without writing its keys back.
    const reader = stream.body!.getReader();
    for (;;) if ((await reader.read()).done) break;
    expect(await redis.exists(...keys)).toBe(0);
    refused(await send(u, sid, { jsonrpc: '2.0', id: 3, method: 'ping' }), 404, -32001);
    expect((await del(u.token)).status).toBe(404);
  }, 60_000);
});

describe('mcp hostile — sessions without end', () => {
  it(`mcp hostile — a client that never sends DELETE holds at most ${MAX_SESSIONS_PER_USER} sessions (each was kept for a day): one more ends the oldest, whose next request is 404`, async () => {
    const u = await stack.user();
    const opened = [await open(u)];
    // The first is the oldest by a clear margin (ids opened in the same millisecond tie).
    await sleep(5);
    for (let i = 1; i < MAX_SESSIONS_PER_USER; i++) opened.push(await open(u));
    expect((await sessionsOf(u.sub)).length).toBe(MAX_SESSIONS_PER_USER);
    const newest = await open(u);
    const held = await sessionsOf(u.sub);
    expect(held.length).toBe(MAX_SESSIONS_PER_USER);
    expect(held.sort()).toEqual([...opened.slice(1), newest].sort());
    refused(await send(u, opened[0], { jsonrpc: '2.0', id: 2, method: 'ping' }), 404, -32001);
    for (const sid of [opened[1], newest]) expect((await send(u, sid, { jsonrpc: '2.0', id: 3, method: 'ping' })).status).toBe(200);
    // Another user's sessions are theirs to count.
    const other = await stack.user();
    expect((await send(other, await open(other), { jsonrpc: '2.0', id: 5, method: 'ping' })).status).toBe(200);
    expect((await sessionsOf(u.sub)).length).toBe(MAX_SESSIONS_PER_USER);
  }, 60_000);
});

describe('mcp hostile — subscriptions', () => {
  it('mcp hostile — a session holds at most 1,000 subscriptions (they were kept without end): one more → -32602; the same again, or after an unsubscribe, is fine', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const subscribe = (i: number, method = 'resources/subscribe') => ({ jsonrpc: '2.0', id: i, method, params: { uri: `workspace:///files/s/${i}` } });
    for (let from = 0; from < 1_000; from += 100) {
      const batch = await send(u, sid, Array.from({ length: 100 }, (_, i) => subscribe(from + i)));
      expect((batch.body as { result?: unknown }[]).every((r) => r.result !== undefined), JSON.stringify(batch.body).slice(0, 300)).toBe(true);
    }
    expect((await send(u, sid, subscribe(1_000))).body.error).toMatchObject({ code: -32602 });
    expect((await send(u, sid, subscribe(999))).body.result).toEqual({});
    expect((await send(u, sid, subscribe(0, 'resources/unsubscribe'))).body.result).toEqual({});
    expect((await send(u, sid, subscribe(1_000))).body.result).toEqual({});
    expect(await redis.scard(`mcp:{${sid}}:subs`)).toBe(1_000);
  });
});

describe('mcp hostile — rate limit', () => {
  it('mcp hostile — a batch draws from the rate limit once per request it holds (100 tool calls cost one): beyond the bucket 429 RATE_LIMITED', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const batch = Array.from({ length: 100 }, (_, i) => ({ ...call('list_projects', {}), id: i }));
    const post = () => mcpPost(stack.url, batch, { authorization: `Bearer ${u.token}`, 'mcp-session-id': sid });
    const started = Date.now();
    const first = await post();
    expect(first.status).toBe(200);
    expect(((await first.json()) as unknown[]).length).toBe(100);
    // The session's initialize and this batch: 101 requests, less what refilled (50 a second) meanwhile.
    const refilled = Math.ceil(((Date.now() - started) / 1000) * 50) + 1;
    expect(Number(first.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(BURST - 101 + refilled);
    let refusal: globalThis.Response | undefined;
    for (let i = 0; i < 40 && !refusal; i++) {
      const res = await post();
      if (res.status === 429) {
        refusal = res;
      } else {
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    }
    expect(refusal, 'no batch was refused').toBeDefined();
    expect(refusal!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await refusal!.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  }, 120_000);
});

describe('mcp hostile — params', () => {
  it('mcp hostile — params that break a method\'s schema → -32602 in our words, never -32603', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const rpc = (method: string, params?: unknown) => ({ jsonrpc: '2.0', id: 9, method, ...(params !== undefined && { params }) });
    for (const message of [
      rpc('resources/read', { uri: 42 }),
      rpc('resources/read', {}),
      rpc('resources/subscribe', { uri: null }),
      rpc('resources/unsubscribe', { uri: ['x'] }),
      rpc('resources/list', { cursor: 5 }),
      rpc('logging/setLevel', { level: 'loud' }),
      rpc('tools/call', { name: 5 }),
      call('list_directory', 'not an object'),
      call('list_directory', null),
    ]) {
      const res = await send(u, sid, message);
      expect(res.status, JSON.stringify(message)).toBe(200);
      expect(res.body, JSON.stringify(message)).toMatchObject({ jsonrpc: '2.0', id: message.id, error: { code: -32602 } });
    }
    const read = await send(u, sid, rpc('resources/read', { uri: 42 }));
    expect(read.body.error.message).not.toMatch(/invalid_type|"path"/);
    // What follows still works: the session is intact.
    expect((await send(u, sid, rpc('logging/setLevel', { level: 'debug' }))).body).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });

  it('mcp hostile — hostile paths and URIs are tool errors or -32602, with the API code; nothing stored', async () => {
    const u = await stack.user();
    const sid = await open(u);
    for (const [path, code] of [
      ['/files/a\u0000b', 'INVALID_PATH'],
      [`/files/${'a'.repeat(256)}`, 'INVALID_PATH'],
      ['/files/a/../../b', 'INVALID_PATH'],
      ['/etc/passwd', 'INVALID_PATH'],
    ] as const) {
      const res = await send(u, sid, call('write_file', { path, content: 'x' }));
      expect(res.body.result, path).toMatchObject({ isError: true, structuredContent: { error: { code } } });
    }
    for (const uri of ['workspace:///../x', 'workspace:///files/%2e%2e/x', 'workspace:///files/%ff', 'http://example.com/', 'workspace:///filesx', 'workspace:///files/%00']) {
      for (const method of ['resources/read', 'resources/subscribe']) {
        const res = await send(u, sid, { jsonrpc: '2.0', id: 1, method, params: { uri } });
        expect(res.body.error?.code, `${method} ${uri}`).toBe(-32602);
      }
    }
    expect(await filesOf(u)).toEqual([]);
    expect(await redis.exists(`mcp:{${sid}}:subs`)).toBe(0);
  });
});

describe('mcp hostile — edit_file', () => {
  /** How long a ping of another user takes while `busy` runs. */
  async function pingDuring(busy: Promise<unknown>): Promise<number> {
    const other = await stack.user();
    const sid = await open(other);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    expect((await send(other, sid, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    const took = Date.now() - started;
    await busy;
    return took;
  }

  it('mcp hostile — a diff of 10,000 changed lines does not hold the gateway (it took over a minute): the whole text replaced, other users served meanwhile', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const before = Array.from({ length: 10_000 }, (_, i) => `line ${i}\n`).join('');
    // Every other line changes: a diff with context lines, 10,000 lines apart.
    const after = Array.from({ length: 10_000 }, (_, i) => (i % 2 ? `line ${i}\n` : `LINE ${i}\n`)).join('');
    expect((await send(u, sid, call('write_file', { path: '/files/big.txt', content: before }))).body.result.isError).toBeUndefined();
    const edit = send(u, sid, call('edit_file', { path: '/files/big.txt', edits: [{ oldText: before, newText: after }], dryRun: true }));
    expect(await pingDuring(edit)).toBeLessThan(5_000);
    const { diff } = (await edit).body.result.structuredContent as { diff: string };
    const lines = diff.split('\n');
    expect(lines.slice(0, 5)).toEqual(['Index: /files/big.txt', '='.repeat(67), '--- /files/big.txt', '+++ /files/big.txt', '@@ -1,10000 +1,10000 @@']);
    expect(lines.filter((l) => l.startsWith('-')).length).toBe(10_000 + 1);
    expect(lines.filter((l) => l.startsWith('+')).length).toBe(10_000 + 1);
    // A small change of the same file still gets its exact diff.
    const small = await send(u, sid, call('edit_file', { path: '/files/big.txt', edits: [{ oldText: 'line 5000\n', newText: 'five thousand\n' }], dryRun: true }));
    expect(small.body.result.structuredContent.diff).toContain('@@ -4998,7 +4998,7 @@\n line 4997\n line 4998\n line 4999\n-line 5000\n+five thousand\n');
  }, 120_000);

  it('mcp hostile — 10,000 edits of a 1 MB file → INVALID_ARGUMENT at once (it took a minute of the gateway\'s one thread); nothing changes', async () => {
    const u = await stack.user();
    const sid = await open(u);
    const content = Array.from({ length: 100_000 }, (_, i) => `l${String(i).padStart(8, '0')}\n`).join('');
    const written = (await send(u, sid, call('write_file', { path: '/files/many.txt', content }))).body.result.structuredContent as { sha256: string };
    const edits = Array.from({ length: 10_000 }, (_, i) => ({ oldText: `l${String(i * 10).padStart(8, '0')}\n`, newText: `L${i}\n` }));
    const edit = send(u, sid, call('edit_file', { path: '/files/many.txt', edits }));
    expect(await pingDuring(edit)).toBeLessThan(5_000);
    expect((await edit).body.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'INVALID_ARGUMENT', details: { field: 'edits' } } } });
    const info = await send(u, sid, call('get_file_info', { path: '/files/many.txt' }));
    expect(info.body.result.structuredContent.sha256).toBe(written.sha256);
    // As many edits as fit are applied.
    const fewer = await send(u, sid, call('edit_file', { path: '/files/many.txt', edits: edits.slice(0, 100) }));
    expect(fewer.body.result.isError, JSON.stringify(fewer.body).slice(0, 300)).toBeUndefined();
  }, 180_000);
});
