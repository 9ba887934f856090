import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@workspace/platform';
import { MatchPool } from '../src/adapters/match-pool.js';
import { compileQuery } from '../src/domain/matcher.js';
import type { MatchJob } from '../src/domain/ports.js';

/** The built worker: the pool runs it as Node runs the service (integration tests run after the build). */
const workerUrl = new URL('../dist/adapters/match.worker.js', import.meta.url);
const logger = createLogger('match-pool-test', 'silent');
const pools: MatchPool[] = [];
const pool = (size = 1) => {
  const p = new MatchPool({ size, logger, workerUrl });
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const job = (text: string, q: string, regex = false, max = 1000): MatchJob => ({ query: { q, regex, caseSensitive: false }, bytes: Buffer.from(text), after: [0, 0], max });
/** A line a heavy pattern searches for seconds. */
const HEAVY = job(`${'a'.repeat(999)}z`.repeat(512), '[^\\n]{0,500}z', true);

describe('match pool', () => {
  it('match pool — the matches of the in-process matcher, with the time they took', async () => {
    const text = 'one TODO\ntwo\nTODO todo three';
    const outcome = await pool().match(job(text, 'todo'), { owner: 'u', timeLeftMs: 5_000 });
    expect(outcome).toMatchObject({ overBudget: false, matches: compileQuery('todo', false, false).matches(text, [0, 0], 1000) });
    expect(outcome.ms).toBeGreaterThanOrEqual(0);
  });

  it('match pool — a job past its time is stopped (overBudget) and the pool goes on with a new worker', async () => {
    const p = pool();
    const started = performance.now();
    expect(await p.match(HEAVY, { owner: 'u', timeLeftMs: 300 })).toMatchObject({ overBudget: true });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await p.match(job('abc', 'b'), { owner: 'u', timeLeftMs: 5_000 })).toMatchObject({ overBudget: false, matches: [{ line: 1, column: 2 }] });
    expect(await p.match(job('abc', 'b'), { owner: 'u', timeLeftMs: 0 })).toMatchObject({ overBudget: true, ms: 0 });
  });

  it('match pool — an aborted job stops at once, running or waiting, and rejects with the reason', async () => {
    const p = pool();
    const running = new AbortController();
    const waiting = new AbortController();
    const first = p.match(HEAVY, { owner: 'u', timeLeftMs: 60_000, signal: running.signal });
    const second = p.match(HEAVY, { owner: 'u', timeLeftMs: 60_000, signal: waiting.signal });
    const reason = new Error('caller gone');
    waiting.abort(reason);
    await expect(second).rejects.toBe(reason);
    await new Promise((r) => setTimeout(r, 200));
    const stopped = performance.now();
    running.abort(reason);
    await expect(first).rejects.toBe(reason);
    expect(performance.now() - stopped).toBeLessThan(100);
    expect(await p.match(job('x', 'x'), { owner: 'u', timeLeftMs: 5_000 })).toMatchObject({ overBudget: false });
  });

  it('match pool — owners take turns: one owner with many jobs waiting does not keep another behind all of them', async () => {
    const p = pool(1);
    const done: string[] = [];
    const track = (owner: string, n: number) => p.match(job('abc', 'b'), { owner, timeLeftMs: 5_000 }).then(() => done.push(`${owner}${n}`));
    const all = [...[1, 2, 3, 4, 5].map((n) => track('a', n)), track('b', 1)];
    await Promise.all(all);
    expect(done.indexOf('b1')).toBeLessThanOrEqual(2);
  });

  it('match pool — close() fails what waits or runs as UNAVAILABLE', async () => {
    const p = new MatchPool({ size: 1, logger, workerUrl });
    const running = p.match(HEAVY, { owner: 'u', timeLeftMs: 60_000 });
    const waiting = p.match(HEAVY, { owner: 'u', timeLeftMs: 60_000 });
    const outcomes = Promise.allSettled([running, waiting]);
    await new Promise((r) => setTimeout(r, 100));
    await p.close();
    for (const outcome of await outcomes) expect(outcome).toMatchObject({ status: 'rejected', reason: { code: 'UNAVAILABLE' } });
  });
});
