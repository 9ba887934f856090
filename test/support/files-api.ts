import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';
import { q, upload, type FormPart } from './files.js';
import type { ApiResponse, ApiUser, SharedStack } from './stack.js';

/** Helpers for the files suites (docs/api/files.md): uploads, listings, hashes, raw HTTP bodies. */

export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const SHA256 = /^[0-9a-f]{64}$/;
export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

export interface Entry {
  path: string;
  name: string;
  type: 'file' | 'directory';
  size?: number;
  modifiedAt?: string;
  mimeType?: string;
  sha256?: string;
}

export const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** Byte order of UTF-8 strings (what listings sort by, docs/api/files.md#list), for Array.prototype.sort. */
export const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Uploads `content` to the full file path `path` (overwrite unless told) and expects 200. */
export async function put(stack: SharedStack, u: ApiUser, path: string, content: string | Uint8Array = 'x', onConflict = 'overwrite'): Promise<{ path: string; size: number; mimeType: string; sha256: string }> {
  const res = await upload(stack.url, u, { filename: 'ignored', content }, { path, onConflict });
  expect(res.status, `upload ${path}: ${res.text}`).toBe(200);
  return res.body;
}

export const move = (u: ApiUser, from: string, to: string, onConflict?: string): Promise<ApiResponse> =>
  u.request('POST', '/v1/agent/files/move', { from, to, ...(onConflict !== undefined && { onConflict }) });

export const copy = (u: ApiUser, from: string, to: string, onConflict?: string): Promise<ApiResponse> =>
  u.request('POST', '/v1/agent/files/copy', { from, to, ...(onConflict !== undefined && { onConflict }) });

/** Expects a 200 move or copy and returns where it landed. */
export async function ok(res: Promise<ApiResponse>): Promise<string> {
  const r = await res;
  expect(r.status, r.text).toBe(200);
  return r.body.path;
}

export async function list(u: ApiUser, path: string, options: { recursive?: boolean; includeStats?: boolean } = {}): Promise<Entry[]> {
  const res = await u.request('GET', `/v1/agent/files?path=${q(path)}&recursive=${options.recursive ?? false}&includeStats=${options.includeStats ?? true}`);
  expect(res.status, `list ${path}: ${res.text}`).toBe(200);
  return res.body.entries;
}

export const read = (u: ApiUser, path: string): Promise<ApiResponse> => u.request('GET', `/v1/agent/files/read?path=${q(path)}`);

export interface Downloaded {
  status: number;
  headers: Headers;
  bytes: Buffer;
  sha256: string;
}

export async function download(baseUrl: string, u: ApiUser, path: string, headers: Record<string, string> = {}): Promise<Downloaded> {
  const res = await fetch(`${baseUrl}/v1/agent/files/download?path=${q(path)}`, { headers: { authorization: `Bearer ${u.token}`, ...headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, sha256: sha256(bytes) };
}

/** The file entry at `path`, or undefined when the path holds no file. */
export async function stat(u: ApiUser, path: string): Promise<Entry | undefined> {
  const res = await u.request('GET', `/v1/agent/files?path=${q(path)}`);
  if (res.status === 404) return undefined;
  expect(res.status, res.text).toBe(200);
  const entries = res.body.entries as Entry[];
  return entries.length === 1 && entries[0]!.path === path && entries[0]!.type === 'file' ? entries[0] : undefined;
}

/** Runs `fn` over `items`, `limit` at a time. */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * A directory of `seeds × 2^doublings` files at `root`, built with few uploads: `seeds` files are
 * uploaded, then each level is moved under `a` and copied to `b`. Returns the relative path of
 * every file and directory below `root`, and the sha256 of every file.
 */
export async function buildTree(stack: SharedStack, u: ApiUser, root: string, seeds: number, doublings: number): Promise<{ files: Map<string, string>; dirs: Set<string> }> {
  const work = `${root}.build`;
  const seedSha = new Map<string, string>();
  await pool(
    Array.from({ length: seeds }, (_, i) => i),
    4,
    async (i) => {
      const content = `seed ${i} of ${root}\n`;
      seedSha.set(`f${String(i).padStart(3, '0')}.txt`, sha256(content));
      await put(stack, u, `${work}/0/f${String(i).padStart(3, '0')}.txt`, content);
    },
  );
  let files = seedSha;
  const dirs = new Set<string>();
  for (let k = 0; k < doublings; k++) {
    await ok(move(u, `${work}/${k}`, `${work}/${k + 1}/a`));
    await ok(copy(u, `${work}/${k + 1}/a`, `${work}/${k + 1}/b`));
    const next = new Map<string, string>();
    const nextDirs = new Set<string>(['a', 'b']);
    for (const side of ['a', 'b']) {
      for (const [rel, sha] of files) next.set(`${side}/${rel}`, sha);
      for (const d of dirs) nextDirs.add(`${side}/${d}`);
    }
    files = next;
    dirs.clear();
    for (const d of nextDirs) dirs.add(d);
  }
  await ok(move(u, `${work}/${doublings}`, root));
  return { files, dirs };
}

/**
 * Checks that the entries of a recursive listing hold exactly one of the trees `a` and `b`, whole
 * (every file and directory of `expected` below it, nothing else); returns which one.
 */
export function wholeTreeIn(entries: Entry[], a: string, b: string, expected: { files: Map<string, string>; dirs: Set<string> }): 'a' | 'b' | string {
  const under = (root: string) => entries.filter((e) => e.path === root || e.path.startsWith(`${root}/`)).map((e) => (e.path === root ? '' : `${e.type}:${e.path.slice(root.length + 1)}`));
  const inA = under(a);
  const inB = under(b);
  const want = ['', ...[...expected.files.keys()].map((p) => `file:${p}`), ...[...expected.dirs].map((p) => `directory:${p}`)].sort();
  const whole = (got: string[]) => got.length === want.length && [...got].sort().every((x, i) => x === want[i]);
  if (inA.length > 0 && inB.length === 0 && whole(inA)) return 'a';
  if (inB.length > 0 && inA.length === 0 && whole(inB)) return 'b';
  return `${a}: ${inA.length} entries, ${b}: ${inB.length} entries (want ${want.length} in exactly one)`;
}

/** Follows `cursor` pages of a listing to the end. */
export async function listPaged(u: ApiUser, path: string, limit: number, options: { recursive?: boolean; includeStats?: boolean; between?: (page: number) => Promise<void> } = {}): Promise<{ entries: Entry[]; pages: number }> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query = `path=${q(path)}&recursive=${options.recursive ?? false}&includeStats=${options.includeStats ?? true}&limit=${limit}${cursor === null ? '' : `&cursor=${q(cursor)}`}`;
    const res = await u.request('GET', `/v1/agent/files?${query}`);
    expect(res.status, `page ${pages + 1} of ${path}: ${res.text}`).toBe(200);
    expect(res.body.entries.length).toBeLessThanOrEqual(limit);
    expect(typeof res.body.hasMore).toBe('boolean');
    expect(res.body.hasMore, 'hasMore ⇔ a cursor').toBe(res.body.cursor !== null);
    if (res.body.hasMore) expect(typeof res.body.cursor).toBe('string');
    entries.push(...res.body.entries);
    pages++;
    cursor = res.body.cursor;
    if (cursor !== null) await options.between?.(pages);
  } while (cursor !== null && pages < 10_000);
  return { entries, pages };
}

// ---- raw multipart bodies, for clients that misbehave -------------------------------------

export const newBoundary = (): string => `----hostile${randomBytes(12).toString('hex')}`;

/** The bytes of a multipart/form-data body, with or without its closing delimiter. */
export function multipartBytes(boundary: string, parts: FormPart[], options: { closing?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('value' in part) {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`, 'utf8'));
    } else {
      const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${part.name}"${filename}\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`, 'utf8'));
      if (!(part.content instanceof Uint8Array)) throw new Error('multipartBytes takes byte contents only');
      chunks.push(Buffer.from(part.content), Buffer.from('\r\n'));
    }
  }
  if (options.closing !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export interface RawUpload {
  socket: Socket;
  /** Resolves with what the server sent, once it closed the connection (or we did). */
  closed: Promise<{ response: string; at: number }>;
  /** Writes bytes and waits until the socket took them. */
  write(bytes: Uint8Array): Promise<void>;
}

/**
 * Opens a socket to the gateway and sends the head of an upload request that announces
 * `contentLength` body bytes; the caller writes (part of) the body.
 */
export async function rawUpload(baseUrl: string, u: ApiUser, options: { boundary: string; contentLength: number; requestId: string; query?: string }): Promise<RawUpload> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const received: Buffer[] = [];
  socket.on('data', (d: Buffer) => received.push(d));
  socket.on('error', () => undefined); // a reset by the server is one of the outcomes under test
  const closed = new Promise<{ response: string; at: number }>((resolve) => socket.once('close', () => resolve({ response: Buffer.concat(received).toString('utf8'), at: Date.now() })));
  const write = (bytes: Uint8Array) => new Promise<void>((resolve, reject) => socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  await write(
    Buffer.from(
      `POST /v1/agent/files/upload${options.query ?? ''} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${u.token}\r\n` +
        `Content-Type: multipart/form-data; boundary=${options.boundary}\r\nContent-Length: ${options.contentLength}\r\nX-Request-Id: ${options.requestId}\r\nConnection: close\r\n\r\n`,
    ),
  );
  return { socket, closed, write };
}

/** The status of a raw HTTP/1.1 response (0 when there was none). */
export const statusOf = (response: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);

/** The JSON body of a raw HTTP/1.1 response (Content-Length or chunked), when there is one. */
export function jsonOf(response: string): { error?: { code?: string; details?: Record<string, unknown> } } | undefined {
  const at = response.indexOf('\r\n\r\n');
  if (at < 0) return undefined;
  const head = response.slice(0, at).toLowerCase();
  let body = response.slice(at + 4);
  if (head.includes('transfer-encoding: chunked')) {
    let out = '';
    for (;;) {
      const nl = body.indexOf('\r\n');
      const size = parseInt(body.slice(0, nl), 16);
      if (!size) break;
      out += body.slice(nl + 2, nl + 2 + size);
      body = body.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Resolves once the readiness probe answers 200. */
export async function ready(baseUrl: string, timeout = 30_000): Promise<void> {
  await expect
    .poll(
      async () => {
        try {
          return (await fetch(`${baseUrl}/readyz`)).status;
        } catch {
          return 0;
        }
      },
      { timeout, interval: 100 },
    )
    .toBe(200);
}

/** Whether a response (or a fetch failure) is a failure a client may retry. */
export function isUnavailable(res: ApiResponse | undefined): boolean {
  return res !== undefined && res.status === 503 && res.body?.error?.code === 'UNAVAILABLE';
}
