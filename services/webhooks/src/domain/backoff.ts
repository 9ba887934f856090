/** How failed deliveries are retried (docs/api/webhooks.md#delivery: exponential backoff for at least 24 h). */
export interface RetryPolicy {
  /** Delay after the first failure; each further failure doubles it. */
  baseMs: number;
  /** The longest delay between two attempts. */
  maxMs: number;
  /** Attempts go on until one fails this long after the first attempt; then the delivery is given up. */
  windowMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 5_000, maxMs: 60 * 60_000, windowMs: 24 * 60 * 60_000 };

/**
 * The wait after the `attempt`-th failed attempt (1-based): base × 2^(attempt−1), capped at max,
 * with "equal jitter" (between half and all of it), so receivers that failed together are not
 * retried in lockstep and no wait is shorter than half the schedule.
 */
export function retryDelayMs(attempt: number, policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

/**
 * When to try again after a failed attempt, or undefined to give up: the delivery's first attempt
 * was `windowMs` or more ago. So the last attempt comes at or after the window's end, whatever
 * the jitter did.
 */
export function nextAttemptAt(options: { attempt: number; firstAttemptAt: number; nowMs: number; policy: RetryPolicy; random?: () => number }): number | undefined {
  const { attempt, firstAttemptAt, nowMs, policy } = options;
  if (nowMs - firstAttemptAt >= policy.windowMs) return undefined;
  return nowMs + retryDelayMs(attempt, policy, options.random);
}
