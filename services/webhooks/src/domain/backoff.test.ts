import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, nextAttemptAt, retryDelayMs } from './backoff.js';

const HOUR = 60 * 60_000;

describe('backoff', () => {
  it('backoff — doubles from the base, capped at the maximum, jitter between half and all of it', () => {
    const policy = { baseMs: 5_000, maxMs: HOUR };
    const full = (n: number) => retryDelayMs(n, policy, () => 1);
    const half = (n: number) => retryDelayMs(n, policy, () => 0);
    expect([1, 2, 3, 4].map(full)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect([1, 2, 3, 4].map(half)).toEqual([2_500, 5_000, 10_000, 20_000]);
    expect(full(11)).toBe(HOUR);
    expect(full(500)).toBe(HOUR);
    for (let n = 1; n < 30; n++) {
      const d = retryDelayMs(n, policy);
      expect(d).toBeGreaterThanOrEqual(half(n));
      expect(d).toBeLessThanOrEqual(full(n));
    }
  });

  it('backoff — with the default policy attempts go on for at least 24 h, the last one at or after the window, whatever the jitter', () => {
    for (const random of [() => 0, () => 1, Math.random]) {
      const start = 0;
      let now = start;
      let attempt = 1;
      let next = nextAttemptAt({ attempt, firstAttemptAt: start, nowMs: now, policy: DEFAULT_RETRY, random });
      while (next !== undefined) {
        now = next;
        attempt++;
        next = nextAttemptAt({ attempt, firstAttemptAt: start, nowMs: now, policy: DEFAULT_RETRY, random });
      }
      expect(now - start).toBeGreaterThanOrEqual(24 * HOUR);
      expect(now - start).toBeLessThan(25 * HOUR);
      // Exponential, not a flood: a few dozen attempts in a day.
      expect(attempt).toBeGreaterThan(20);
      expect(attempt).toBeLessThan(60);
    }
  });
});
