import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script of the repository (no types): the helpers npm start uses
import { choosePorts } from '../scripts/lib.mjs';

type Chosen = Record<string, { port: number; how: 'set' | 'default' | 'picked' }>;
const choose = choosePorts as (wanted: Record<string, { given?: string | undefined; fallback: number }>) => Promise<Chosen>;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Listens on a free port (or `port`) of 127.0.0.1 and keeps it until the test ends. */
function occupy(port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    servers.push(server);
    server.once('error', reject).listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const port = await occupy();
  await new Promise((r) => servers.pop()!.close(r));
  return port;
}

describe('npm start — the ports a stack binds (scripts/lib.mjs choosePorts)', () => {
  it('start ports — a port set is kept; a free default is taken; a default in use is replaced by a free port, so two stacks do not collide', async () => {
    const [taken, free] = [await occupy(), await freePort()];
    const chosen = await choose({ gateway: { given: '8123', fallback: 8080 }, metrics: { fallback: free }, busy: { fallback: taken } });
    expect(chosen.gateway).toEqual({ port: 8123, how: 'set' });
    expect(chosen.metrics).toEqual({ port: free, how: 'default' });
    expect(chosen.busy!.how).toBe('picked');
    expect(chosen.busy!.port).not.toBe(taken);
    // The picked port is really free: it can be bound now.
    await occupy(chosen.busy!.port);
  });

  it('start ports — no two names get the same port, also when their defaults are the same or all taken', async () => {
    const taken = await occupy();
    const free = await freePort();
    const chosen = await choose({ a: { fallback: free }, b: { fallback: free }, c: { fallback: taken }, d: { fallback: taken }, e: { given: '', fallback: taken } });
    const ports = Object.values(chosen).map((c) => c.port);
    expect(new Set(ports).size).toBe(ports.length);
    expect(chosen.a).toEqual({ port: free, how: 'default' });
    expect(chosen.b!.how).toBe('picked');
    expect(chosen.e!.how).toBe('picked');
  });
});
