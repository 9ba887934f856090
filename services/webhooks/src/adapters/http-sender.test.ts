import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../domain/address-policy.js';
import { newWebhookSecret } from '../domain/ids.js';
import type { Resolver } from '../domain/ports.js';
import { HttpSender } from './http-sender.js';

/** A receiver on a random loopback port answering as `route` says. */
let server: Server;
let port = 0;
const seen: Array<{ path: string; headers: IncomingMessage['headers']; body: string }> = [];
beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    seen.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
    if (req.url === '/redirect') return void res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end();
    if (req.url === '/hang') return; // never answers
    res.writeHead(req.url === '/fail' ? 503 : 200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Names the test controls: `listed.test` is allowed, the others are not. */
const names: Record<string, string[]> = { 'listed.test': ['127.0.0.1'], 'rebound.test': ['127.0.0.1'], 'mixed.test': ['93.184.215.14', '127.0.0.1'] };
const resolver: Resolver = { resolve: async (host) => names[host] ?? [] };
const sender = (timeoutMs = 2_000) => new HttpSender({ policy: new AddressPolicy(['127.0.0.1', 'listed.test']), resolver, timeoutMs });
const send = (s: HttpSender, url: string, secret = newWebhookSecret()) => s.send({ url, secret, messageId: 'evt-1', body: '{"id":"evt-1"}', signal: new AbortController().signal });

describe('http sender', () => {
  it('http sender — signs per Standard Webhooks: the library verifies it; webhook-id is the message id', async () => {
    const secret = newWebhookSecret();
    const s = sender();
    expect(await send(s, `http://127.0.0.1:${port}/ok`, secret)).toEqual({ ok: true, status: 200, error: null });
    const got = seen.at(-1)!;
    expect(got.headers['webhook-id']).toBe('evt-1');
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual({ id: 'evt-1' });
    expect(await send(s, `http://listed.test:${port}/ok`)).toMatchObject({ ok: true, status: 200 });
    await s.close();
  });

  it('http sender — a redirect is not followed (a failed attempt); a non-2xx fails with its status', async () => {
    const s = sender();
    const before = seen.length;
    expect(await send(s, `http://127.0.0.1:${port}/redirect`)).toEqual({ ok: false, status: 302, error: 'HTTP 302' });
    expect(seen.slice(before).map((r) => r.path)).toEqual(['/redirect']);
    expect(await send(s, `http://127.0.0.1:${port}/fail`)).toEqual({ ok: false, status: 503, error: 'HTTP 503' });
    await s.close();
  });

  it('http sender — a receiver that never answers is cut off at the timeout', async () => {
    const s = sender(300);
    const started = Date.now();
    expect(await send(s, `http://127.0.0.1:${port}/hang`)).toEqual({ ok: false, status: null, error: 'timed out' });
    expect(Date.now() - started).toBeLessThan(2_000);
    await s.close();
  });

  it('http sender — at delivery, a name now resolving to a private address (or to one among public ones) is refused before any byte is sent', async () => {
    const s = sender();
    const before = seen.length;
    for (const host of ['rebound.test', 'mixed.test']) {
      const result = await send(s, `https://${host}:${port}/ok`);
      expect(result).toMatchObject({ ok: false, status: null });
      expect(result.error).toMatch(/private/);
    }
    expect(await send(s, `https://127.0.0.2:${port}/ok`)).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/private/) });
    expect(await send(s, `http://rebound.test:${port}/ok`)).toMatchObject({ ok: false, error: expect.stringMatching(/https/) });
    expect(seen.length).toBe(before);
    await s.close();
  });
});
