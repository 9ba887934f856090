import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStore } from './object-store.js';

type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void;

/** A stand-in for the store on a port of its own choosing; each test sets what it answers. */
let handle: Handler = (_req, _body, res) => void res.end();
let server: Server;
let base: string;
const store = new ObjectStore();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => handle(req, Buffer.concat(chunks), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  store.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('object store', () => {
  it('object store — PUT sends the bytes with Content-Length and resolves with the ETag', async () => {
    let seen: { method?: string; url?: string; length?: string; body?: string } = {};
    handle = (req, body, res) => {
      seen = { method: req.method, url: req.url, length: req.headers['content-length'], body: body.toString() };
      res.setHeader('ETag', '"abc"');
      res.end();
    };
    expect(await store.put(`${base}/bucket/key?X-Amz-Signature=s`, Buffer.from('hello'))).toBe('"abc"');
    expect(seen).toEqual({ method: 'PUT', url: '/bucket/key?X-Amz-Signature=s', length: '5', body: 'hello' });
  });

  it('object store — an error status, an answer without ETag and a refused connection are UNAVAILABLE', async () => {
    handle = (_req, _body, res) => void res.writeHead(500).end('<Error><Code>InternalError</Code></Error>');
    await expect(store.put(`${base}/k`, Buffer.from('x'))).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'the object store is unavailable; retry later' });
    handle = (_req, _body, res) => void res.end();
    await expect(store.put(`${base}/k`, Buffer.from('x'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(store.put(`http://127.0.0.1:${port}/k`, Buffer.from('x'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('object store — GET forwards one range and hands over the body; the wrong status is UNAVAILABLE', async () => {
    handle = (req, _body, res) => {
      if (req.headers.range === 'bytes=2-4') res.writeHead(206, { 'Content-Length': 3 }).end('llo');
      else res.writeHead(200).end('hello');
    };
    expect(await text(await store.get(`${base}/k`, { start: 2, end: 4 }))).toBe('llo');
    expect(await text(await store.get(`${base}/k`))).toBe('hello');
    handle = (_req, _body, res) => void res.writeHead(200).end('hello');
    await expect(store.get(`${base}/k`, { start: 2, end: 4 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    handle = (_req, _body, res) => void res.writeHead(403).end();
    await expect(store.get(`${base}/k`)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('object store — a request on a pooled connection the store had closed goes once more; a reset on a fresh one is UNAVAILABLE', async () => {
    const own = new ObjectStore();
    const perSocket = new Map<unknown, number>();
    let requests = 0;
    // The store answers a connection's first request and resets it at the second: to the client,
    // a keep-alive socket that died while pooled.
    handle = (req, _body, res) => {
      requests++;
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1) req.socket.destroy();
      else res.writeHead(200, { ETag: `"${requests}"` }).end(`answer ${requests}`);
    };
    try {
      // Read whole, the first answer gives its connection back to the pool, where the second finds it.
      expect(await text(await own.get(`${base}/k`))).toBe('answer 1');
      expect(await own.put(`${base}/k`, Buffer.from('x'))).toBe('"3"');
      expect({ requests, sockets: perSocket.size }).toEqual({ requests: 3, sockets: 2 });
      // A fresh connection reset is the store's trouble, not a stale socket: no second try.
      requests = 0;
      handle = (req) => {
        requests++;
        req.socket.destroy();
      };
      const fresh = new ObjectStore();
      await expect(fresh.put(`${base}/k`, Buffer.from('x'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect(requests).toBe(1);
      fresh.close();
    } finally {
      own.close();
    }
  });

  it('object store — many requests under one signal leave no listener behind; an aborted one fails', async () => {
    handle = (_req, _body, res) => void res.writeHead(200, { ETag: '"e"' }).end();
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await store.put(`${base}/k`, Buffer.from('x'), controller.signal);
    // Each request lets go of the signal once it is over (the last one a moment after its answer).
    await expect.poll(() => getEventListeners(controller.signal, 'abort').length).toBe(0);
    controller.abort();
    await expect(store.put(`${base}/k`, Buffer.from('x'), controller.signal)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
