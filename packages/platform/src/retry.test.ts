import { describe, expect, it } from 'vitest';
import { conflictRetry, retryForever, retryWhen } from './retry.js';

describe('retry', () => {
  it('retry — a transaction that loses races commits on a later attempt; one that always loses is UNAVAILABLE after maxAttempts', async () => {
    const conflicts = conflictRetry({ maxAttempts: 5, maxDelayMs: 2, store: 'the test store' });
    let attempts = 0;
    expect(await conflicts(async () => ({ committed: ++attempts > 2, value: attempts }))).toBe(3);
    attempts = 0;
    await expect(conflicts(async () => ({ committed: false, value: ++attempts }))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'the test store (too much contention) is unavailable; retry later',
    });
    expect(attempts).toBe(5);
    // An error is not a lost race: it rejects at once.
    attempts = 0;
    await expect(conflicts(async () => Promise.reject(new Error(`boom ${++attempts}`)))).rejects.toThrow('boom 1');
  });

  it('retry — forever retries until success with growing, capped waits, and stops on abort without another attempt', async () => {
    const failures: number[] = [];
    let calls = 0;
    const started = performance.now();
    const value = await retryForever(async () => (++calls < 4 ? Promise.reject(new Error('down')) : 'up'), {
      initialDelayMs: 4,
      maxDelayMs: 8,
      onFailure: (err, attempt) => {
        expect(err).toMatchObject({ message: 'down' });
        failures.push(attempt);
      },
    });
    expect({ value, calls, failures }).toEqual({ value: 'up', calls: 4, failures: [1, 2, 3] });
    // Waits of [2, 4), [4, 8) and [4, 8) ms (timers may fire up to a millisecond early).
    expect(performance.now() - started).toBeGreaterThanOrEqual(7);

    const stop = new AbortController();
    calls = 0;
    const stopped = retryForever(
      async () => {
        if (++calls === 2) stop.abort(new Error('stopping'));
        throw new Error('down');
      },
      { initialDelayMs: 1, maxDelayMs: 2, signal: stop.signal },
    );
    await expect(stopped).rejects.toThrow();
    expect(calls).toBe(2);
  });

  it('retry — retryWhen retries only the errors it accepts, as often as told, and never once the signal aborted', async () => {
    class Stale extends Error {}
    const again = retryWhen((err) => err instanceof Stale, { retries: 1 });
    let calls = 0;
    expect(await again(async () => (++calls === 1 ? Promise.reject(new Stale()) : 'ok'))).toBe('ok');
    expect(calls).toBe(2);
    calls = 0;
    await expect(again(async () => Promise.reject(new Stale(`stale ${++calls}`)))).rejects.toThrow('stale 2');
    calls = 0;
    await expect(again(async () => Promise.reject(new Error(`other ${++calls}`)))).rejects.toThrow('other 1');
    const aborted = AbortSignal.abort();
    calls = 0;
    await expect(again(async () => Promise.reject(new Stale(`stale ${++calls}`)), aborted)).rejects.toThrow('stale 1');
  });
});
