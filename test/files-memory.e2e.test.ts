import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pattern, upload } from './support/files.js';
import { startStack, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const MiB = 1024 * 1024;

/** Resident set size of a process, from /proc/<pid>/status (Linux). */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

describe('files — memory', () => {
  it('memory — uploading 1 GiB through the gateway grows neither the gateway nor the files service by 64 MiB', async () => {
    const u = await stack.user();
    const pids = { gateway: stack.services.gateway!.child.pid!, files: stack.services.files!.child.pid! };
    const cold = { gateway: rss(pids.gateway), files: rss(pids.files) };
    // Warm up: first uploads allocate lazily (JIT, pools, connections); the baseline is taken after.
    for (let i = 0; i < 2; i++) expect((await upload(stack.url, u, { filename: 'warm.bin', content: pattern(64 * MiB) }, { onConflict: 'overwrite' })).status).toBe(200);
    const baseline = { gateway: rss(pids.gateway), files: rss(pids.files) };
    const peak = { ...baseline };
    const sampler = setInterval(() => {
      peak.gateway = Math.max(peak.gateway, rss(pids.gateway));
      peak.files = Math.max(peak.files, rss(pids.files));
    }, 50);
    try {
      const res = await upload(stack.url, u, { filename: 'huge.bin', content: pattern(1024 * MiB) });
      expect(res.status, res.text).toBe(200);
      expect(res.body.size).toBe(1024 * MiB);
    } finally {
      clearInterval(sampler);
    }
    const growth = { gateway: peak.gateway - baseline.gateway, files: peak.files - baseline.files };
    const mib = (n: number) => (n / MiB).toFixed(1);
    console.log(
      `RSS at start — gateway ${mib(cold.gateway)} MiB, files ${mib(cold.files)} MiB; while uploading 1 GiB — gateway: ${mib(baseline.gateway)} → peak ${mib(peak.gateway)} MiB (+${mib(growth.gateway)} MiB); ` +
        `files: ${mib(baseline.files)} → peak ${mib(peak.files)} MiB (+${mib(growth.files)} MiB)`,
    );
    expect(growth.gateway).toBeLessThan(64 * MiB);
    expect(growth.files).toBeLessThan(64 * MiB);
    // Loose bound from a cold start too, one-time allocations (part buffers, heap) included.
    expect(peak.gateway - cold.gateway).toBeLessThan(150 * MiB);
    expect(peak.files - cold.files).toBeLessThan(150 * MiB);
    await u.request('DELETE', '/v1/agent/files?path=/files/huge.bin');
  }, 600_000);
});
