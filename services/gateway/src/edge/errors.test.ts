import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Metadata, status } from '@grpc/grpc-js';
import express from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromGrpcError, type Logger, type OutgoingContext } from '@workspace/platform';
import { defineRoute, mountRoutes } from '../api/route.js';
import { errorHandler } from './errors.js';
import { requestId } from './request-id.js';
import { setUser } from './request-context.js';

/** What the platform's gRPC client rejects with: a status decoded into an AppError. */
const grpcFailure = (code: status, details: string) => fromGrpcError(Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() }), 'files');

/** How the service answers the next long poll. */
let answer: 'wait' | 'down' | 'fail-after-leaving' = 'wait';
let polls = 0;
const service = {
  poll: (ctx: OutgoingContext) =>
    new Promise<void>((_resolve, reject) => {
      polls++;
      if (answer === 'down') return reject(grpcFailure(status.UNAVAILABLE, 'connect ECONNREFUSED 10.0.0.7:50051'));
      // The client cancels the call when the signal fires, and the call ends CANCELLED; or the service fails on its own meanwhile.
      ctx.signal!.addEventListener('abort', () => reject(answer === 'wait' ? grpcFailure(status.CANCELLED, 'Cancelled on client') : grpcFailure(status.UNKNOWN, 'TypeError: x is undefined')), { once: true });
    }),
};

/** A long poll as routes make one: the call carries the signal that fires when the client leaves. */
const pollRoute = defineRoute({
  method: 'get',
  path: '/v1/poll',
  operationId: 'poll',
  summary: 'Wait for the service',
  tag: 'Test',
  responses: { 200: { description: 'Never: the service fails or the client leaves' } },
  errors: ['UNAVAILABLE'],
  handler: async ({ call }, res) => {
    await service.poll(call);
    res.end();
  },
});

const lines: { level: string; msg: string; requestId?: unknown }[] = [];
const logAt = (level: string) => (obj: { requestId?: unknown }, msg: string) => void lines.push({ level, msg, requestId: obj.requestId });
const logger = { debug: logAt('debug'), info: logAt('info'), warn: logAt('warn'), error: logAt('error') } as unknown as Logger;

let server: Server;
let base = '';
beforeAll(async () => {
  const app = express();
  app.use(requestId);
  app.use(mountRoutes([pollRoute], [(_req, res, next) => void (setUser(res, 'u-1'), next())]));
  app.use(errorHandler(logger));
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  lines.length = 0;
  polls = 0;
});

/** A long poll that the client leaves once it is parked. */
async function leave(id: string): Promise<void> {
  const client = new AbortController();
  const poll = fetch(`${base}/v1/poll`, { headers: { 'x-request-id': id }, signal: client.signal });
  await expect.poll(() => polls).toBe(1);
  client.abort();
  await expect(poll).rejects.toThrow();
  await expect.poll(() => lines.some((l) => l.requestId === id)).toBe(true);
  await sleep(20);
}

describe('error handler — a client that goes away', () => {
  it('client gone — an abandoned long poll is logged at debug, not as an error', async () => {
    answer = 'wait';
    await leave('gone-1');
    expect(lines).toEqual([{ level: 'debug', msg: 'client went away', requestId: 'gone-1' }]);
  });

  it('client gone — a failure of the service while the client waits is an error (and a 503)', async () => {
    answer = 'down';
    const res = await fetch(`${base}/v1/poll`, { headers: { 'x-request-id': 'down-1' } });
    expect(res.status).toBe(503);
    expect(lines).toEqual([{ level: 'error', msg: 'request failed', requestId: 'down-1' }]);
  });

  it('client gone — a real failure that is not the cancellation stays an error, even once the client has left', async () => {
    answer = 'fail-after-leaving';
    await leave('gone-2');
    expect(lines).toEqual([{ level: 'error', msg: 'request failed', requestId: 'gone-2' }]);
  });
});
