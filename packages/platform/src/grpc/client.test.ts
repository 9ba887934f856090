import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { createClient } from './client.js';
import { GrpcServer } from './server.js';

/** A service of each streaming kind the client makes, on JSON. */
const json = { serialize: (v: unknown) => Buffer.from(JSON.stringify(v)), deserialize: (b: Buffer) => JSON.parse(b.toString()) as { n: number } };
const method = <Q extends boolean, S extends boolean>(name: string, requestStream: Q, responseStream: S) => ({
  path: `/test.Echo/${name}`,
  requestStream,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
const Echo = { echo: method('Echo', false, false), count: method('Count', false, true), sum: method('Sum', true, false), hold: method('Hold', false, false) };

let cancelledHolds = 0;
const server = new GrpcServer(createLogger('test', 'silent')).add(Echo, {
  echo: async (req) => req,
  count: async function* (req) {
    for (let i = 0; i < req.n; i++) yield { n: i };
  },
  sum: async (requests) => {
    let n = 0;
    for await (const r of requests) n += r.n;
    return { n };
  },
  // Answers only when the caller gives up.
  hold: (_req, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => (cancelledHolds++, resolve({ n: 0 })), { once: true })),
});
let client: ReturnType<typeof createClient<typeof Echo>>;
beforeAll(async () => {
  const port = await server.listen('127.0.0.1', 0);
  client = createClient(Echo, { serviceName: 'echo', address: `127.0.0.1:${port}`, deadlineMs: 5_000 });
});
afterAll(() => {
  client.close();
  server.server.forceShutdown();
});

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;
async function* numbers(count: number) {
  for (let i = 1; i <= count; i++) yield { n: i };
}

describe('grpc client — cancellation by signal', () => {
  it('grpc client — calls made one after another on one signal (one request) leave no abort listener behind, so no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const request = new AbortController();
      const ctx = { signal: request.signal };
      for (let i = 0; i < 25; i++) {
        expect(await client.echo({ n: i }, ctx)).toEqual({ n: i });
        expect(listeners(request.signal), `after unary call ${i}`).toBe(0);
      }
      for (let i = 0; i < 15; i++) {
        const got: number[] = [];
        for await (const m of client.count({ n: 3 }, ctx)) got.push(m.n);
        expect(got).toEqual([0, 1, 2]);
        // Left early: the stream is cancelled, and its listener goes with it.
        for await (const m of client.count({ n: 100 }, ctx)) if (m.n === 1) break;
        expect(await client.sum(numbers(4), ctx)).toEqual({ n: 10 });
        expect(listeners(request.signal), `after streams ${i}`).toBe(0);
      }
      for (let round = 0; round < 5; round++) {
        const calls = Array.from({ length: 8 }, (_, i) => client.echo({ n: i }, ctx));
        expect(listeners(request.signal)).toBeLessThanOrEqual(8);
        await Promise.all(calls);
        expect(listeners(request.signal), `after round ${round}`).toBe(0);
      }
      // Failed calls too.
      for (let i = 0; i < 12; i++) await client.hold({ n: i }, { ...ctx, deadlineMs: 20 }).catch(() => undefined);
      expect(listeners(request.signal), 'after calls past their deadline').toBe(0);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('grpc client — the signal still cancels a call in flight, and one already aborted is not sent on', async () => {
    const request = new AbortController();
    const before = cancelledHolds;
    const held = client.hold({ n: 0 }, { signal: request.signal });
    await sleep(100);
    expect(listeners(request.signal)).toBe(1);
    request.abort();
    await expect(held).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect.poll(() => cancelledHolds).toBe(before + 1);
    expect(listeners(request.signal)).toBe(0);
    await expect(client.echo({ n: 1 }, { signal: request.signal })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(client.sum(numbers(2), { signal: request.signal })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
