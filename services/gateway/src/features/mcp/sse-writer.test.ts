import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseWriter } from './sse-writer.js';

/** A real server and a client that reads only when told: the writer meets a socket that fills. */
async function serve(stallMs: number) {
  let stalls = 0;
  const served = new Promise<{ res: ServerResponse; writer: SseWriter<number> }>((resolve) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      resolve({ res, writer: new SseWriter<number>(res, stallMs, () => void stalls++) });
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
  });
  const [server] = servers.slice(-1);
  await once(server!, 'listening');
  const client = await new Promise<IncomingMessage>((resolve) => get(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/`, resolve));
  client.pause();
  return { ...(await served), client, stalls: () => stalls };
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

const EVENT = `data: ${'x'.repeat(2_000)}\n\n`;

describe('mcp sse writer', () => {
  it('sse writer — a full socket makes each write wait for drain: never more than the high-water mark and one event held; all flushed once the client reads', async () => {
    const { res, writer, client } = await serve(10_000);
    let most = 0;
    let done = 0;
    const writing = (async () => {
      for (let i = 1; i <= 5_000; i++) {
        expect(await writer.write(EVENT, i)).toBe(true);
        most = Math.max(most, res.writableLength);
        done = i;
      }
    })();
    // 10 MB: far more than the kernel takes while the client reads nothing.
    await expect.poll(() => done, { timeout: 5_000 }).toBeGreaterThan(0);
    // Stuck: the writes wait on the socket, none is taken while the client reads nothing.
    let before = -1;
    await expect.poll(() => (before === done ? 'stuck' : void (before = done)), { interval: 200, timeout: 5_000 }).toBe('stuck');
    expect(done).toBeLessThan(5_000);
    client.resume();
    await writing;
    expect(await writer.idle()).toBe(true);
    expect(writer.take()).toBe(5_000);
    expect(writer.take()).toBeUndefined();
    expect(most).toBeLessThanOrEqual(res.writableHighWaterMark + EVENT.length + 100);
    res.end();
  });

  it('sse writer — a socket that takes nothing for stallMs is destroyed: the waiting write resolves false, and what was flushed before is known', async () => {
    const { res, writer, stalls } = await serve(300);
    let ok = true;
    let written = 0;
    while (ok) {
      ok = await writer.write(EVENT, written + 1);
      if (ok) written++;
    }
    expect(stalls()).toBe(1);
    expect(res.destroyed).toBe(true);
    expect(await writer.write(EVENT, 0)).toBe(false);
    expect(await writer.idle()).toBe(false);
    const flushed = writer.take()!;
    expect(flushed).toBeGreaterThan(0);
    expect(flushed).toBeLessThanOrEqual(written + 1);
  });
});
