import { createHash } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, errors, summarizeContent } from '@workspace/platform';
import { EntryType, type CommitUploadRequest } from '@workspace/proto/workspace/files/v1/files';
import { errorHandler } from '../../edge/errors.js';
import { ObjectStore } from '../../transfer/object-store.js';
import { requestId } from '../../edge/request-id.js';
import { setUser } from '../../edge/request-context.js';
import type { FilesRouteDeps } from './files.routes.js';
import { downloadRoute } from './download.route.js';
import { mountRoutes } from '../../api/route.js';
import { uploadRoute } from './upload.route.js';
import type { FilesClient } from '../../clients.js';

/** The object store's stand-in: keeps what is PUT, serves GETs (with Range), or fails on demand. */
const objects = new Map<string, Buffer>();
let storeFails = false;
/** GETs that send half the body, then cut the connection ('cut') or keep it open ('hang'). */
let getMode: 'whole' | 'cut' | 'hang' = 'whole';
let hangingClosed = false;
let s3: Server;
let s3Url = '';

/** What the files service was asked, and how it answers. */
let calls: { commits: CommitUploadRequest[]; aborts: string[]; parts: number[]; reserved: number[] };
let refuseBegin = false;
const PART_SIZE = 1000;

const files = {
  beginUpload: async (r: { path?: string; filename: string }) => {
    if (refuseBegin) throw errors.fileExists(r.path ?? '/files/x');
    return { uploadId: 'up-1', path: r.path ?? `/files/${r.filename}`, putUrl: `${s3Url}/single`, partSize: PART_SIZE, maxBytes: 10 * PART_SIZE, summaryMaxBytes: PART_SIZE };
  },
  reserveUpload: async (r: { uploadId: string; totalBytes: number }) => {
    calls.reserved.push(r.totalBytes);
    return {};
  },
  uploadParts: async (r: { firstPartNumber: number; count: number }) => {
    calls.parts.push(r.firstPartNumber);
    return { urls: Array.from({ length: r.count }, (_, i) => `${s3Url}/part/${r.firstPartNumber + i}`) };
  },
  commitUpload: async (r: CommitUploadRequest) => {
    calls.commits.push(r);
    return { path: '/files/a.txt', size: r.size, mimeType: 'text/plain', sha256: r.sha256 };
  },
  abortUpload: async (r: { uploadId: string }) => {
    calls.aborts.push(r.uploadId);
    return {};
  },
  openDownload: async () => ({
    entry: { path: '/files/a.txt', name: 'a.txt', type: EntryType.ENTRY_TYPE_FILE, size: 10, modifiedAt: '2024-05-01T12:00:00.000Z', mimeType: 'text/plain', sha256: 'ab'.repeat(32) },
    url: `${s3Url}/single`,
  }),
} as unknown as FilesClient;

const store = new ObjectStore();
let gateway: Server;
let base = '';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  s3 = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (storeFails) return void res.writeHead(500).end('<Error/>');
      if (req.method === 'PUT') {
        objects.set(req.url!, Buffer.concat(chunks));
        return void res.writeHead(200, { ETag: `"etag${req.url}"` }).end();
      }
      const body = objects.get(req.url!) ?? Buffer.alloc(0);
      if (getMode !== 'whole') {
        res.once('close', () => (hangingClosed = true));
        res.writeHead(200, { 'Content-Length': body.length }).write(body.subarray(0, 5), () => getMode === 'cut' && res.destroy());
        return;
      }
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (range) res.writeHead(206, { 'Content-Length': Number(range[2]) - Number(range[1]) + 1 }).end(body.subarray(Number(range[1]), Number(range[2]) + 1));
      else res.writeHead(200, { 'Content-Length': body.length }).end(body);
    });
  });
  s3Url = await listen(s3);
  const deps: FilesRouteDeps = { files, projects: {} as FilesRouteDeps['projects'], store, logger: createLogger('test', 'silent'), uploadIdleTimeoutMs: 300 };
  const app = express();
  app.use(requestId);
  const authenticate: express.RequestHandler = (_req, res, next) => void (setUser(res, 'u-1'), next());
  app.use(mountRoutes([uploadRoute(deps), downloadRoute(files, store)], [authenticate]));
  app.use(errorHandler(deps.logger));
  gateway = createServer(app);
  base = await listen(gateway);
});

afterAll(async () => {
  store.close();
  for (const server of [gateway, s3]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

afterEach(() => {
  calls = { commits: [], aborts: [], parts: [], reserved: [] };
  refuseBegin = false;
  storeFails = false;
  getMode = 'whole';
  objects.clear();
});
calls = { commits: [], aborts: [], parts: [], reserved: [] };

const BOUNDARY = 'b0undary';
const head = (filename: string) => Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n`);
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends `chunks` as the body; `end: false` leaves the request open (a stalled client). */
function post(chunks: Buffer[], options: { end?: boolean; length?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = options.length ?? chunks.reduce((n, c) => n + c.length, 0);
    const req = request(`${base}/v1/agent/files/upload`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length } });
    req.on('error', reject).on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    for (const chunk of chunks) req.write(chunk);
    if (options.end !== false) req.end();
  });
}

function get(headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(`${base}/v1/agent/files/download?path=/files/a.txt`, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('close', () => res.complete || reject(new Error(`the connection broke after ${body.length} bytes`)));
    })
      .on('error', reject)
      .end();
  });
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const code = (a: Answer) => (JSON.parse(a.body) as { error: { code: string; message: string } }).error;

describe('files transfer routes', () => {
  it('upload route — a small file is one PUT, committed after the closing delimiter with size, sha256 and its content summary', async () => {
    const content = Buffer.from('hello');
    const answer = await post([head('a.txt'), content, tail]);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ success: true, path: '/files/a.txt', size: 5, mimeType: 'text/plain', sha256: sha256(content) });
    expect(objects.get('/single')).toEqual(content);
    expect(calls.commits).toEqual([{ uploadId: 'up-1', size: 5, sha256: sha256(content), parts: [], summary: Buffer.from(summarizeContent(content)) }]);
  });

  it('upload route — a larger file goes in parts, each ETag committed in order', async () => {
    const content = Buffer.alloc(2 * PART_SIZE + 10, 7);
    expect((await post([head('big.bin'), content.subarray(0, 1500), content.subarray(1500), tail])).status).toBe(200);
    expect(calls.parts).toEqual([1]);
    expect(calls.reserved, 'each part reserved before it is sent').toEqual([PART_SIZE, 2 * PART_SIZE, 2 * PART_SIZE + 10]);
    expect(calls.commits[0]?.parts).toEqual([1, 2, 3].map((n) => ({ partNumber: n, etag: `"etag/part/${n}"` })));
    expect(Buffer.concat([1, 2, 3].map((n) => objects.get(`/part/${n}`)!))).toEqual(content);
  });

  it('upload route — a body that ends without the closing delimiter is 400 and aborts; nothing is committed', async () => {
    const answer = await post([head('a.txt'), Buffer.from('hello')]);
    expect(answer.status).toBe(400);
    expect(code(answer).code).toBe('INVALID_ARGUMENT');
    await expect.poll(() => calls.aborts).toEqual(['up-1']);
    expect(calls.commits).toEqual([]);
  });

  it('upload route — a stalled body is 400, the connection is closed, and the upload aborted', async () => {
    const answer = await post([head('a.txt'), Buffer.from('hel')], { end: false, length: 1000 });
    expect(answer.status).toBe(400);
    expect(code(answer)).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('stalled') });
    expect(answer.headers.connection).toBe('close');
    await expect.poll(() => calls.aborts).toEqual(['up-1']);
    expect(calls.commits).toEqual([]);
  });

  it('upload route — a part after the file is 400 even once the bytes are stored; nothing is committed', async () => {
    const field = Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="path"\r\n\r\n/files/late.txt`);
    const answer = await post([head('a.txt'), Buffer.from('hello'), field, tail]);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'INVALID_ARGUMENT', details: { field: 'path' } } });
    await expect.poll(() => calls.aborts).toEqual(['up-1']);
    expect(calls.commits).toEqual([]);
  });

  it('upload route — a client that goes away mid-body aborts the upload', async () => {
    const req = request(`${base}/v1/agent/files/upload`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': 100_000 } });
    req.on('error', () => undefined);
    req.write(Buffer.concat([head('a.txt'), Buffer.alloc(2500, 1)]));
    await expect.poll(() => objects.has('/part/1')).toBe(true);
    req.destroy();
    await expect.poll(() => calls.aborts).toEqual(['up-1']);
    expect(calls.commits).toEqual([]);
  });

  it('upload route — a failing store is 503 with Retry-After, never a raw 500; the upload is aborted', async () => {
    storeFails = true;
    const answer = await post([head('a.txt'), Buffer.from('hello'), tail]);
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(code(answer)).toEqual({ code: 'UNAVAILABLE', message: 'the object store is unavailable; retry later', requestId: expect.any(String) });
    await expect.poll(() => calls.aborts).toEqual(['up-1']);
  });

  it('upload route — an early refusal from BeginUpload answers before any byte is stored', async () => {
    refuseBegin = true;
    const answer = await post([head('a.txt'), Buffer.from('hello'), tail]);
    expect(answer.status).toBe(409);
    expect(code(answer).code).toBe('FILE_EXISTS');
    expect(objects.size).toBe(0);
  });

  it('download route — streams the bytes with ETag "<sha256>", forwards one Range, answers 304 and HEAD without the store', async () => {
    objects.set('/single', Buffer.from('0123456789'));
    const whole = await get();
    expect(whole).toMatchObject({ status: 200, body: '0123456789' });
    expect(whole.headers).toMatchObject({ etag: `"${'ab'.repeat(32)}"`, 'content-length': '10', 'accept-ranges': 'bytes' });
    const part = await get({ range: 'bytes=2-4' });
    expect(part).toMatchObject({ status: 206, body: '234' });
    expect(part.headers['content-range']).toBe('bytes 2-4/10');
    expect((await get({ 'if-none-match': `"${'ab'.repeat(32)}"` })).status).toBe(304);
    storeFails = true;
    expect((await get({}, 'HEAD')).status).toBe(200);
  });

  it('download route — a store that fails before the headers is 503', async () => {
    storeFails = true;
    const answer = await get();
    expect(answer.status).toBe(503);
    expect(code(answer).code).toBe('UNAVAILABLE');
  });

  it('download route — a store that fails mid-body breaks the connection; a client that leaves stops the store request', async () => {
    objects.set('/single', Buffer.from('0123456789'));
    getMode = 'cut';
    await expect(get()).rejects.toThrow();
    getMode = 'hang';
    const req = request(`${base}/v1/agent/files/download?path=/files/a.txt`);
    req.on('error', () => undefined).end();
    const res = await new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
    res.on('error', () => undefined);
    req.destroy();
    await expect.poll(() => hangingClosed).toBe(true);
  });
});
