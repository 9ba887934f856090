import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the gateway that can cut the network: once armed, the first
 * connection whose client has sent more than `afterBytes` bytes since then (a kept-alive
 * connection counts afresh) is destroyed on both sides mid-stream, as a dropped link would.
 * Everything else passes untouched.
 */
export interface CuttingProxy {
  url: string;
  /** Cuts the next connection that sends more than `afterBytes`; resolves when it has. */
  cutAfter(afterBytes: number): Promise<void>;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  /** Bytes each client connection sent since the proxy was last armed. */
  const sent = new Map<Socket, number>();
  let armed: { afterBytes: number; done: () => void } | undefined;
  const server = createServer((client) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    sockets.add(client).add(upstream);
    sent.set(client, 0);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      sent.delete(client);
    };
    client.on('data', (chunk: Buffer) => {
      const total = (sent.get(client) ?? 0) + chunk.byteLength;
      sent.set(client, total);
      if (armed && total > armed.afterBytes) {
        const { done } = armed;
        armed = undefined;
        drop();
        done();
        return;
      }
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.pipe(client);
    client.on('end', () => upstream.end());
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${own}`,
    cutAfter: (afterBytes) =>
      new Promise<void>((resolve) => {
        for (const client of sent.keys()) sent.set(client, 0);
        armed = { afterBytes, done: resolve };
      }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
