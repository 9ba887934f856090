import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpStatusOf, isErrorCode, tenantKey, userTag } from '@workspace/platform';
import { testRedis } from './support/backends.js';
import { q, uploadParts, type FormPart } from './support/files.js';
import { download, sha256 } from './support/files-api.js';
import { auditIndex, storedObjects } from './support/files-index-check.js';
import { mcpConnect, type McpConnection } from './support/mcp.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * One hostile suite for every way bytes come in (multipart, tus and MCP's write_file here; an Agent import's
 * knowledge in agents-export.e2e.test.ts): the same cases, the same answers, and after each
 * refusal or failure nothing left behind — no pending upload, reservation, upload slot, or
 * object in the bucket that the sweeper would not remove.
 */
const MiB = 1024 * 1024;
const MAX_UPLOAD_BYTES = 12 * MiB;
const QUOTA = 24 * MiB;
const IDLE_MS = 1_500;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    env: { MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES), FILE_QUOTA_BYTES: String(QUOTA), UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_MS) },
  });
});
afterAll(async () => {
  await Promise.all([...mcpSessions.values()].map((c) => c.close()));
  await stack?.stop();
});

/** What a way in answered: the HTTP status and the JSON error code (or the stored file). */
interface Outcome {
  status: number;
  code?: string;
  details?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

interface Destination {
  /** Raw bytes, so that names which are not UTF-8 can be sent. */
  path?: Buffer | string;
  filename?: Buffer | string;
  onConflict?: string;
}

/** A way bytes come in, driven as a real client would drive it. */
interface WayIn {
  name: string;
  /** Sends the whole file. */
  send(u: ApiUser, dest: Destination, content: Buffer): Promise<Outcome>;
  /** Sends `sent` of `total` bytes, then stops sending (the connection stays open); resolves when the server ends the exchange. */
  stall(u: ApiUser, dest: Destination, total: number, sent: number): Promise<{ ended: boolean; after: number }>;
  /** Sends `sent` of `total` bytes, then drops the connection. */
  cutOff(u: ApiUser, dest: Destination, total: number, sent: number): Promise<void>;
  /** Ends what the way in may legitimately keep for a client to resume (tus: terminate). */
  release?(u: ApiUser): Promise<void>;
}

const outcome = (res: ApiResponse): Outcome => ({ status: res.status, code: res.body?.error?.code, details: res.body?.error?.details, body: res.body });
const text = (v: Buffer | string) => (typeof v === 'string' ? v : v.toString('latin1'));

// ---- multipart ----------------------------------------------------------------------------

function formParts(dest: Destination, content: Buffer): FormPart[] {
  const parts: FormPart[] = [];
  if (dest.path !== undefined) parts.push({ name: 'path', value: text(dest.path) });
  if (dest.onConflict !== undefined) parts.push({ name: 'onConflict', value: dest.onConflict });
  parts.push({ name: 'file', filename: dest.filename === undefined ? 'file.bin' : text(dest.filename), content });
  return parts;
}

/** The request head and the form's bytes up to the file's content (latin1: raw bytes as sent). */
function rawForm(u: ApiUser, dest: Destination, total: number): { head: Buffer; preamble: Buffer; closing: Buffer } {
  const boundary = `----hostile${randomBytes(8).toString('hex')}`;
  const fields: Buffer[] = [];
  if (dest.path !== undefined) fields.push(Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n`), Buffer.from(dest.path), Buffer.from('\r\n')]));
  const filename = dest.filename === undefined ? Buffer.from('file.bin') : Buffer.from(dest.filename);
  fields.push(Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="`), filename, Buffer.from('"\r\nContent-Type: application/octet-stream\r\n\r\n')]));
  const preamble = Buffer.concat(fields);
  const closing = Buffer.from(`\r\n--${boundary}--\r\n`);
  const { host } = new URL(stack.url);
  const head = Buffer.from(
    `POST /v1/agent/files/upload HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${u.token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${preamble.length + total + closing.length}\r\nConnection: close\r\n\r\n`,
  );
  return { head, preamble, closing };
}

const multipartWay: WayIn = {
  name: 'multipart',
  send: async (u, dest, content) => {
    // Names that are not UTF-8 need the raw bytes on the wire: fetch would re-encode them.
    if (Buffer.isBuffer(dest.path) || Buffer.isBuffer(dest.filename)) {
      const { head, preamble, closing } = rawForm(u, dest, content.length);
      const response = await exchange(Buffer.concat([head, preamble, content, closing]));
      return parseRaw(response);
    }
    return outcome(await uploadParts(stack.url, u, formParts(dest, content)));
  },
  stall: async (u, dest, total, sent) => {
    const { head, preamble } = rawForm(u, dest, total);
    return stallAfter(Buffer.concat([head, preamble, randomBytes(sent)]));
  },
  cutOff: async (u, dest, total, sent) => {
    const { head, preamble } = rawForm(u, dest, total);
    await cutAfter(Buffer.concat([head, preamble, randomBytes(sent)]));
  },
};

// ---- tus ----------------------------------------------------------------------------------

const TUS = () => `${stack.url}/v1/agent/files/uploads`;
/** Upload URLs each user created, to terminate what a case leaves resumable. */
const tusUploads = new Map<string, string[]>();

function tusMetadata(dest: Destination): string {
  const pairs: string[] = [];
  const add = (key: string, v: Buffer | string | undefined) => v !== undefined && pairs.push(`${key} ${Buffer.from(v).toString('base64')}`);
  add('filename', dest.filename ?? 'file.bin');
  add('path', dest.path);
  add('onConflict', dest.onConflict);
  return pairs.join(',');
}

async function tusCreate(u: ApiUser, dest: Destination, total: number): Promise<{ res: Response; url?: string }> {
  const res = await fetch(TUS(), { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': String(total), 'upload-metadata': tusMetadata(dest) } });
  const location = res.headers.get('location') ?? undefined;
  if (location) tusUploads.set(u.sub, [...(tusUploads.get(u.sub) ?? []), location]);
  return { res, ...(location && { url: location }) };
}

/** The raw head of a PATCH of `length` bytes at `offset`. */
function patchHead(u: ApiUser, url: string, offset: number, length: number): Buffer {
  const { host, pathname } = new URL(url);
  return Buffer.from(
    `PATCH ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${u.token}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: ${offset}\r\n` +
      `Content-Type: application/offset+octet-stream\r\nContent-Length: ${length}\r\n\r\n`,
  );
}

const tusWay: WayIn = {
  name: 'tus',
  send: async (u, dest, content) => {
    const { res, url } = await tusCreate(u, dest, content.length);
    if (res.status !== 201 || !url) {
      const { error } = (await res.json().catch(() => ({}))) as { error?: { code?: string; details?: Record<string, unknown> } };
      return { status: res.status, code: error?.code, details: error?.details };
    }
    if (content.length === 0) return { status: 201 };
    const patch = await fetch(url, { method: 'PATCH', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: content });
    const body = (await patch.json().catch(() => undefined)) as { error?: { code?: string; details?: Record<string, unknown> } } | undefined;
    return { status: patch.status, ...(body?.error && { code: body.error.code, details: body.error.details }) };
  },
  stall: async (u, dest, total, sent) => {
    const { url } = await tusCreate(u, dest, total);
    return stallAfter(Buffer.concat([patchHead(u, url!, 0, total), randomBytes(sent)]));
  },
  cutOff: async (u, dest, total, sent) => {
    const { url } = await tusCreate(u, dest, total);
    await cutAfter(Buffer.concat([patchHead(u, url!, 0, total), randomBytes(sent)]));
  },
  release: async (u) => {
    for (const url of tusUploads.get(u.sub) ?? []) await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' } });
    tusUploads.delete(u.sub);
  },
};

// ---- MCP write_file ------------------------------------------------------------------------

/** One MCP session per user (the official SDK client). */
const mcpSessions = new Map<string, McpConnection>();
async function mcpSession(u: ApiUser): Promise<McpConnection> {
  let c = mcpSessions.get(u.sub);
  if (!c) mcpSessions.set(u.sub, (c = await mcpConnect(stack.url, u)));
  return c;
}

/**
 * A destination as write_file's one `path`: JSON carries Unicode only, so bytes that are not
 * UTF-8 arrive as U+FFFD (what a client's decoder makes of them), which is refused like them.
 */
function mcpPath(dest: Destination): string {
  const decode = (v: Buffer | string) => (typeof v === 'string' ? v : new TextDecoder().decode(v));
  const dir = dest.path === undefined ? '/files/' : decode(dest.path);
  const name = dest.filename === undefined ? 'file.bin' : decode(dest.filename);
  return dir.endsWith('/') ? `${dir}${name}` : dir;
}

/** The raw head and body prefix of a write_file call of `total` content characters on the user's session. */
async function mcpRaw(u: ApiUser, dest: Destination, total: number): Promise<{ head: Buffer; prefix: Buffer }> {
  const c = await mcpSession(u);
  const prefix = Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"path":${JSON.stringify(mcpPath(dest))},"content":"`);
  const length = prefix.length + total + Buffer.byteLength('"}}}');
  const { host } = new URL(stack.url);
  const head = Buffer.from(
    `POST /v1/mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${u.token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Mcp-Session-Id: ${c.transport.sessionId}\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`,
  );
  return { head, prefix };
}

const mcpWay: WayIn = {
  name: 'mcp write_file',
  send: async (u, dest, content) => {
    // write_file takes text: bytes that are not UTF-8 (random test bytes) become as many random ASCII characters.
    const text = content.toString('utf8');
    const ascii = Buffer.from(text, 'utf8').equals(content) ? text : content.toString('base64').slice(0, content.length);
    const answer = await (await mcpSession(u)).call('write_file', { path: mcpPath(dest), content: ascii });
    if (!answer.isError) return { status: 200, body: answer.structuredContent };
    const { code, details } = answer.structuredContent.error as { code: string; details?: Record<string, unknown> };
    return { status: isErrorCode(code) ? httpStatusOf(code) : 0, code, ...(details && { details }) };
  },
  stall: async (u, dest, total, sent) => {
    const { head, prefix } = await mcpRaw(u, dest, total);
    return stallAfter(Buffer.concat([head, prefix, Buffer.alloc(sent, 'a')]));
  },
  cutOff: async (u, dest, total, sent) => {
    const { head, prefix } = await mcpRaw(u, dest, total);
    await cutAfter(Buffer.concat([head, prefix, Buffer.alloc(sent, 'a')]));
  },
};

// ---- raw sockets --------------------------------------------------------------------------

function open(): Promise<{ socket: ReturnType<typeof connect>; closed: Promise<string>; received: () => string }> {
  const { hostname, port } = new URL(stack.url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d)).on('error', () => undefined);
  const received = () => Buffer.concat(chunks).toString('utf8');
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received())));
  return new Promise((resolve, reject) => socket.once('connect', () => resolve({ socket, closed, received })).once('error', reject));
}

/** Sends a whole request (its head asks for Connection: close) and returns the raw response. */
async function exchange(bytes: Buffer): Promise<string> {
  const { socket, closed } = await open();
  socket.write(bytes);
  return closed;
}

function parseRaw(response: string): Outcome {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
  const at = response.indexOf('\r\n\r\n');
  let body: Record<string, unknown> | undefined;
  try {
    const raw = response.slice(at + 4);
    body = JSON.parse(/transfer-encoding: chunked/i.test(response.slice(0, at)) ? raw.slice(raw.indexOf('\r\n') + 2, raw.lastIndexOf('\r\n0\r\n')) : raw);
  } catch {
    body = undefined;
  }
  return { status, code: (body?.error as { code?: string } | undefined)?.code, ...(body && { body }) };
}

/** Sends `bytes`, then nothing more; resolves when the server ends the exchange (or after 3 idle timeouts). */
async function stallAfter(bytes: Buffer): Promise<{ ended: boolean; after: number }> {
  const { socket, closed } = await open();
  socket.write(bytes);
  const started = Date.now();
  const ended = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), IDLE_MS * 3 + 5_000))]);
  socket.destroy();
  return { ended, after: Date.now() - started };
}

/** Sends `bytes`, waits until the server has them, then drops the connection. */
async function cutAfter(bytes: Buffer): Promise<void> {
  const { socket } = await open();
  await new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
  await new Promise((r) => setTimeout(r, 300));
  socket.destroy();
}

// ---- what a failure must not leave --------------------------------------------------------

async function leftovers(u: ApiUser): Promise<{ pending: number; reserved: number; slots: number; stray: string[] }> {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const P = `{u:${tenantKey(u.sub)}}:fs:${bucket}:`;
  const redis = testRedis('leftovers');
  try {
    const [pending, slots, garbage] = await Promise.all([redis.hlen(`${P}up`), redis.zcard(`gateway:uploads:${userTag(u.sub)}`), redis.zrange(`${P}gc`, '0', '-1')]);
    const audit = await auditIndex(stack, u);
    const queued = new Set(garbage);
    const referenced = new Set(audit.referenced);
    // An object no file references is queued for the sweeper, or it is a leak.
    const stray = (await storedObjects(stack, u)).filter((key) => !referenced.has(key) && !queued.has(key));
    return { pending, reserved: audit.reserved.total, slots, stray };
  } finally {
    await redis.quit();
  }
}

async function expectNothingLeft(u: ApiUser, way: WayIn): Promise<void> {
  await way.release?.(u);
  await expect.poll(() => leftovers(u), { timeout: 15_000 }).toEqual({ pending: 0, reserved: 0, slots: 0, stray: [] });
}

async function listed(u: ApiUser): Promise<string[]> {
  const res = await u.request('GET', '/v1/agent/files?recursive=true&includeStats=false');
  return (res.body.entries as { path: string; type: string }[]).filter((e) => e.type === 'file' && !e.path.startsWith('/files/projects/')).map((e) => e.path);
}

// ---- the cases, against every way in ------------------------------------------------------

describe.each([multipartWay, tusWay, mcpWay])('every way in — $name', (way) => {
  it(`${way.name} — an empty file is stored, with the sha256 of no bytes`, async () => {
    const u = await stack.user();
    const res = await way.send(u, { path: '/files/empty.txt' }, Buffer.alloc(0));
    expect(res.status).toBeLessThan(300);
    const entry = (await u.request('GET', `/v1/agent/files?path=${q('/files/empty.txt')}`)).body.entries[0];
    expect(entry).toMatchObject({ path: '/files/empty.txt', size: 0, sha256: sha256(Buffer.alloc(0)) });
    await expectNothingLeft(u, way);
  });

  it(`${way.name} — bad names are 400 INVALID_PATH and leave nothing: bytes that are not UTF-8, "..", a 256-byte segment`, async () => {
    const u = await stack.user();
    const cases: Destination[] = [
      { path: Buffer.concat([Buffer.from('/files/'), Buffer.from([0xff]), Buffer.from('/a.txt')]) },
      { path: '/files/dir/', filename: Buffer.from([0x61, 0xc3, 0x28]) },
      { path: '/files/a/../b.txt' },
      { path: `/files/${'s'.repeat(256)}` },
    ];
    for (const dest of cases) {
      const res = await way.send(u, dest, Buffer.from('hello'));
      expect({ status: res.status, code: res.code }, JSON.stringify(dest)).toEqual({ status: 400, code: 'INVALID_PATH' });
    }
    expect(await listed(u)).toEqual([]);
    await expectNothingLeft(u, way);
  });

  it(`${way.name} — over MAX_UPLOAD_BYTES is 413 and leaves nothing`, async () => {
    const u = await stack.user();
    const res = await way.send(u, { path: '/files/big.bin' }, randomBytes(MAX_UPLOAD_BYTES + 1));
    expect({ status: res.status, code: res.code }).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(await listed(u)).toEqual([]);
    await expectNothingLeft(u, way);
  });

  it(`${way.name} — over the byte quota is 403 QUOTA_EXCEEDED with integer figures, also for uploads racing for the last room`, async () => {
    const u = await stack.user();
    expect((await way.send(u, { path: '/files/fill.bin' }, randomBytes(10 * MiB))).status).toBeLessThan(300);
    expect((await way.send(u, { path: '/files/fill2.bin' }, randomBytes(10 * MiB))).status).toBeLessThan(300);
    // ~4 MiB of room left (less Home's context file): three 3 MiB uploads at once cannot all fit.
    const racing = await Promise.all([1, 2, 3].map((i) => way.send(u, { path: `/files/race-${i}.bin` }, randomBytes(3 * MiB))));
    const won = racing.filter((r) => r.status < 300).length;
    expect(won).toBeLessThanOrEqual(1);
    for (const r of racing.filter((x) => x.status >= 300)) {
      expect({ status: r.status, code: r.code }).toEqual({ status: 403, code: 'QUOTA_EXCEEDED' });
      expect(r.details).toMatchObject({ quota: 'FILE_QUOTA_BYTES', limit: QUOTA, used: expect.any(Number) });
    }
    const usage = (await u.request('GET', '/v1/usage')).body;
    expect(usage.files.bytes).toBeLessThanOrEqual(QUOTA);
    await expectNothingLeft(u, way);
  });

  it(`${way.name} — a body that stalls for UPLOAD_IDLE_TIMEOUT_MS is ended; nothing is stored and the slot is free again`, async () => {
    const u = await stack.user();
    const { ended, after } = await way.stall(u, { path: '/files/stalled.bin' }, 10 * MiB, 3 * MiB);
    expect(ended).toBe(true);
    expect(after).toBeLessThan(IDLE_MS * 3 + 2_000);
    expect(await listed(u)).toEqual([]);
    await expectNothingLeft(u, way);
  });

  it(`${way.name} — a connection dropped mid-body stores nothing`, async () => {
    const u = await stack.user();
    await way.cutOff(u, { path: '/files/cut.bin' }, 10 * MiB, 2 * MiB);
    expect(await listed(u)).toEqual([]);
    await expectNothingLeft(u, way);
  });

  it(`${way.name} — eight uploads that stall hold every slot only until the idle timeout; then uploads are served again`, async () => {
    const u = await stack.user();
    // 2 MiB each: tus reserves a declared length at creation, and eight must fit in the quota.
    const stalls = Array.from({ length: 8 }, (_, i) => way.stall(u, { path: `/files/s${i}.bin` }, 2 * MiB, 256 * 1024));
    const results = await Promise.all(stalls);
    for (const r of results) expect(r.ended).toBe(true);
    const res = await way.send(u, { path: '/files/after.txt' }, Buffer.from('served'));
    expect(res.status).toBeLessThan(300);
    await expectNothingLeft(u, way);
  });
});

describe('multipart — the form', () => {
  it('multipart — refused form fields begin nothing: 40 requests with an unknown field (or a path that is not UTF-8) leave no pending upload, reservation or object', async () => {
    const u = await stack.user();
    for (let i = 0; i < 40; i++) {
      const bad: FormPart = i % 2 === 0 ? { name: 'colour', value: 'blue' } : { name: 'path', value: '/files/\uFFFD.bin' };
      const parts: FormPart[] = i % 2 === 0 ? [{ name: 'path', value: `/files/x${i}.bin` }, bad] : [bad];
      const res = await uploadParts(stack.url, u, [...parts, { name: 'file', filename: 'x.bin', content: randomBytes(2 * MiB) }]);
      expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: i % 2 === 0 ? 'INVALID_ARGUMENT' : 'INVALID_PATH' });
    }
    await expectNothingLeft(u, multipartWay);
  });

  it('multipart — a "file" part without a filename is the file when path names it (also as a text part, as curl -F file=<notes.txt sends it)', async () => {
    const u = await stack.user();
    const binary = randomBytes(1000);
    const a = await uploadParts(stack.url, u, [{ name: 'path', value: '/files/a.bin' }, { name: 'file', content: binary }]);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ path: '/files/a.bin', size: 1000, sha256: sha256(binary) });
    const notes = 'notes — ünïcödé\n';
    const b = await uploadParts(stack.url, u, [{ name: 'path', value: '/files/notes.txt' }, { name: 'file', content: Buffer.from(notes), contentType: 'text/plain' }]);
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ path: '/files/notes.txt', sha256: sha256(notes) });
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/notes.txt')}`)).body.content).toBe(notes);
    // With no Content-Type either, the part is the file's exact bytes, whatever they are (it was
    // refused as "read as text and must be UTF-8"): 3,000 random bytes, 100 KiB of binary.
    for (const [path, content] of [['/files/r.bin', randomBytes(3000)], ['/files/é-ü.bin', randomBytes(100 * 1024)], ['/files/t.txt', Buffer.from(notes)]] as const) {
      const res = await uploadParts(stack.url, u, [{ name: 'path', value: path }, { name: 'file', content, contentType: null }]);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ path, size: content.length, sha256: sha256(content) });
      expect((await download(stack.url, u, path)).bytes.equals(content)).toBe(true);
    }
    // Without path there is no name to store it under.
    const c = await uploadParts(stack.url, u, [{ name: 'file', content: binary }]);
    expect({ status: c.status, code: c.body.error.code, field: c.body.error.details?.field }).toEqual({ status: 400, code: 'INVALID_ARGUMENT', field: 'file' });
    await expectNothingLeft(u, multipartWay);
  });
});

describe('tus — the protocol around the bytes', () => {
  it('tus — OPTIONS answers 204 with Tus-Version, Tus-Extension and Tus-Max-Size, without a token', async () => {
    const res = await fetch(TUS(), { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')?.split(',')).toEqual(expect.arrayContaining(['creation', 'creation-with-upload', 'expiration', 'termination']));
    expect(res.headers.get('tus-max-size')).toBe(String(MAX_UPLOAD_BYTES));
  });

  it('tus — no CORS headers for an origin that is not allowed (nor for no origin)', async () => {
    const u = await stack.user();
    for (const origin of ['https://evil.example', undefined]) {
      const res = await fetch(TUS(), {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-length': '3', 'upload-metadata': tusMetadata({ path: '/files/c.txt' }), ...(origin && { origin }) },
      });
      expect(res.status).toBe(201);
      expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
    await tusWay.release!(u);
  });

  it('tus — an unfinished upload keeps no bytes in Redis: its record stays small, and HEAD reads no bytes', async () => {
    const u = await stack.user();
    const data = randomBytes(11 * MiB);
    const { url } = await tusCreate(u, { path: '/files/unfinished.bin' }, data.length);
    // 7 MiB: less than a part, so all of it waits for the next request.
    const patch = await fetch(url!, { method: 'PATCH', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: data.subarray(0, 7 * MiB) });
    expect(patch.status).toBe(204);
    expect(patch.headers.get('upload-offset')).toBe(String(7 * MiB));
    const redis = testRedis('tus-record');
    try {
      // The gateway's record of the upload (services/gateway/src/features/files/tus/tus-state.redis.ts).
      const id = new URL(url!).pathname.split('/').pop()!;
      expect(Number(await redis.memory('USAGE', `tus:v2:{${id}}`))).toBeLessThan(8 * 1024);
    } finally {
      await redis.quit();
    }
    const head = await fetch(url!, { method: 'HEAD', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0' } });
    expect(head.headers.get('upload-offset')).toBe(String(7 * MiB));
    // The rest arrives: the file has every byte.
    const rest = await fetch(url!, { method: 'PATCH', headers: { authorization: `Bearer ${u.token}`, 'tus-resumable': '1.0.0', 'upload-offset': String(7 * MiB), 'content-type': 'application/offset+octet-stream' }, body: data.subarray(7 * MiB) });
    expect(rest.status).toBe(204);
    expect((await u.request('GET', `/v1/agent/files?path=${q('/files/unfinished.bin')}`)).body.entries[0]).toMatchObject({ size: data.length, sha256: sha256(data) });
    await expectNothingLeft(u, tusWay);
  });

  it('tus — another user\'s HEAD, PATCH and DELETE are 404 and do not disturb the owner\'s PATCH in flight', async () => {
    const owner = await stack.user();
    const other = await stack.user();
    const data = randomBytes(4 * MiB);
    const { url } = await tusCreate(owner, { path: '/files/owned.bin' }, data.length);
    // The owner's PATCH trickles in while the other user knocks.
    const { socket, closed, received } = await open();
    socket.write(patchHead(owner, url!, 0, data.length));
    let knocking = true;
    const knocks = (async () => {
      const statuses: number[] = [];
      while (knocking) statuses.push((await fetch(url!, { method: 'HEAD', headers: { authorization: `Bearer ${other.token}`, 'tus-resumable': '1.0.0' } })).status);
      statuses.push((await fetch(url!, { method: 'DELETE', headers: { authorization: `Bearer ${other.token}`, 'tus-resumable': '1.0.0' } })).status);
      return statuses;
    })();
    for (let at = 0; at < data.length; at += 256 * 1024) {
      socket.write(data.subarray(at, at + 256 * 1024));
      await new Promise((r) => setTimeout(r, 30));
    }
    knocking = false;
    expect(new Set(await knocks)).toEqual(new Set([404]));
    const other404 = await fetch(url!, { method: 'PATCH', headers: { authorization: `Bearer ${other.token}`, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: 'x' });
    expect(other404.status).toBe(404);
    // The answer's head, on the connection kept open (half-closing it could lose the answer).
    await expect.poll(() => received().includes('\r\n\r\n'), { timeout: 10_000 }).toBe(true);
    socket.destroy();
    await closed;
    expect(parseRaw(received()).status).toBe(204);
    expect((await owner.request('GET', `/v1/agent/files?path=${q('/files/owned.bin')}`)).body.entries[0]).toMatchObject({ size: data.length, sha256: sha256(data) });
  });
});
