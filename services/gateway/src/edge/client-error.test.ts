import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@workspace/platform';
import { answerClientError } from './client-error.js';

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => void req.resume().once('end', () => res.end('ok')));
  server.on('clientError', answerClientError(createLogger('test', 'silent')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Sends raw bytes and resolves with everything the server wrote before it closed the connection. */
function exchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(raw);
  });
}

function parsed(response: string) {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine?.split(' ')[1]), headers, body: JSON.parse(body) as { error: Record<string, unknown> } };
}

describe('client errors', () => {
  it('client errors — Content-Length with Transfer-Encoding: chunked is 400 with the envelope', async () => {
    const res = parsed(await exchange('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers.connection).toBe('close');
    expect(res.body).toEqual({ error: { code: 'INVALID_ARGUMENT', message: 'malformed request: Content-Length with Transfer-Encoding, or a bad Transfer-Encoding', requestId: res.headers['x-request-id'] } });
  });

  it('client errors — headers over 16 KiB are 431 with the envelope', async () => {
    const res = parsed(await exchange(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`));
    expect(res.status).toBe(431);
    expect(res.body.error).toMatchObject({ code: 'HEADERS_TOO_LARGE', message: 'request headers are larger than 16 KiB' });
  });

  it('client errors — a connection that ends mid-body is 400 with the envelope', async () => {
    const res = parsed(await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.end('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nabc');
    }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'the request body ended early' });
  });

  it('client errors — a garbled request line is 400 with the envelope; a good request on another connection still works', async () => {
    const res = parsed(await exchange('NOT A REQUEST\r\n\r\n'));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_ARGUMENT');
    expect(await exchange('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK/);
  });

  it('client errors — a HEAD with headers over 16 KiB is 431 with the envelope\'s headers and no body (a client reads none after a HEAD)', async () => {
    const raw = await exchange(`HEAD /x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const [head = '', body] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toMatch(/\r\nContent-Length: [1-9]\d*\r\n/);
    expect(body).toBe('');
  });
});
