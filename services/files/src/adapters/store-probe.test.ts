import type { Client } from 'minio';
import { describe, expect, it } from 'vitest';
import { storeProbe } from './blobs.minio.js';

/** Records what the probe asks of the store; `down` makes the store refuse. */
function store() {
  const calls: string[] = [];
  const state = { down: false };
  const client = {
    putObject: async (_bucket: string, key: string) => void calls.push(`PUT ${key}`),
    statObject: async (_bucket: string, key: string) => {
      calls.push(`HEAD ${key}`);
      if (state.down) throw new Error('connect ECONNREFUSED');
      return {};
    },
    bucketExists: async () => void calls.push('HEAD bucket'),
  } as unknown as Client;
  return { client, calls, state };
}

describe('store probe', () => {
  it('store probe — readiness asks the store once per interval at most, with a HEAD of one object, never of the bucket', async () => {
    const { client, calls } = store();
    const probe = await storeProbe(client, 'b', 60_000);
    for (let i = 0; i < 30; i++) await probe();
    expect(calls).toEqual(['PUT health/probe']);
    const eager = await storeProbe(client, 'b', 0);
    await eager();
    await eager();
    expect(calls.slice(1)).toEqual(['PUT health/probe', 'HEAD health/probe', 'HEAD health/probe']);
  });

  it('store probe — a store that does not answer fails readiness, and is asked again at the next probe', async () => {
    const { client, calls, state } = store();
    const probe = await storeProbe(client, 'b', 0);
    state.down = true;
    await expect(probe()).rejects.toThrow(/store does not answer/);
    await expect(probe()).rejects.toThrow(/store does not answer/);
    state.down = false;
    await probe();
    expect(calls.filter((c) => c.startsWith('HEAD'))).toHaveLength(3);
  });
});
