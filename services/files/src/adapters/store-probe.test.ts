import type { Client } from 'minio';
import { describe, expect, it } from 'vitest';
import { storeProbe } from './blobs.minio.js';

/** Records what the probe asks of the store; `down` makes the store refuse. */
function store() {
  const calls: string[] = [];
  const state = { down: false, noBucket: false };
  const client = {
    getObject: async (_bucket: string, key: string) => {
      calls.push(`GET ${key}`);
      throw state.down ? Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) : Object.assign(new Error('no such key'), { code: state.noBucket ? 'NoSuchBucket' : 'NoSuchKey' });
    },
    bucketExists: async () => void calls.push('HEAD bucket'),
  } as unknown as Client;
  return { client, calls, state };
}

describe('store probe', () => {
  it('store probe — readiness asks the store once per interval at most, for one key that holds nothing (NoSuchKey is healthy), never the bucket, and stores nothing', async () => {
    const { client, calls } = store();
    const probe = storeProbe(client, 'b', 60_000);
    for (let i = 0; i < 30; i++) await probe();
    expect(calls).toEqual(['GET health/probe']);
    const eager = storeProbe(client, 'b', 0);
    await eager();
    await eager();
    expect(calls.slice(1)).toEqual(['GET health/probe', 'GET health/probe']);
  });

  it('store probe — a store that does not answer, or has no bucket, fails readiness, and is asked again at the next probe', async () => {
    const { client, calls, state } = store();
    const probe = storeProbe(client, 'b', 0);
    state.down = true;
    await expect(probe()).rejects.toThrow(/store does not answer/);
    await expect(probe()).rejects.toThrow(/store does not answer/);
    state.down = false;
    state.noBucket = true;
    await expect(probe()).rejects.toThrow(/store does not answer/);
    state.noBucket = false;
    await probe();
    expect(calls.filter((c) => c.startsWith('GET'))).toHaveLength(4);
  });
});
