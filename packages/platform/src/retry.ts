import { ExponentialBackoff, fullJitterGenerator, halfJitterGenerator, handleAll, handleWhen, handleWhenResult, retry } from 'cockatiel';
import { errors } from './errors/app-error.js';

// Every retry loop of the services, as one of three policies of one library (cockatiel). A
// policy is built once and reused: running a call through it costs ~0.2 µs and ~1 KB over a bare
// `await` when the call succeeds at once (bench/compare/retry.mjs), nothing next to the Redis
// round trips of the transactions it wraps.

export interface ForeverOptions {
  /** The first wait; it doubles after each failure up to `maxDelayMs`. Each wait is drawn from [d/2, d). */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Stops retrying (no further attempt starts): the promise rejects with the last failure. */
  signal?: AbortSignal | undefined;
  /** Told about each failure before its wait; `attempt` 1 is the first failure. */
  onFailure?: (err: unknown, attempt: number) => void;
}

/**
 * Runs `fn` until it succeeds, waiting a capped exponential backoff with jitter after each
 * failure (replicas that lost a dependency together do not knock on it in step). For reaching a
 * dependency that may not be up yet. The wait does not hold the process open.
 */
export async function retryForever<T>(fn: () => Promise<T>, options: ForeverOptions): Promise<T> {
  const signal = options.signal ?? new AbortController().signal;
  const backoff = new ExponentialBackoff({ initialDelay: options.initialDelayMs, maxDelay: options.maxDelayMs, generator: halfJitterGenerator });
  const policy = retry(handleAll, { maxAttempts: Infinity, backoff }).dangerouslyUnref();
  const listener = options.onFailure && policy.onRetry((r) => options.onFailure?.('error' in r ? r.error : r.value, r.attempt));
  try {
    // cockatiel looks at the signal before each wait, not after: an attempt due after an abort is refused here.
    return await policy.execute(() => {
      signal.throwIfAborted();
      return fn();
    }, signal);
  } finally {
    listener?.dispose();
  }
}

/** One attempt of an optimistic transaction: it committed, or a concurrent writer won. */
export interface TxAttempt<T> {
  committed: boolean;
  value: T;
}

export interface ConflictRetryOptions {
  /** Attempts in all before giving up with UNAVAILABLE. */
  maxAttempts: number;
  /** After the n-th conflict the wait is drawn from [0, min(maxDelayMs, 2^(n-1) ms)). */
  maxDelayMs: number;
  /** Names the store in the UNAVAILABLE error: "the agent store". */
  store: string;
}

/**
 * Runs optimistic transactions (WATCH/MULTI, compare-and-set scripts) again after each lost
 * race, after a short wait with full jitter so that two writers that collided part. Resolves
 * with the value of the attempt that committed, or of one that decided to write nothing; after
 * `maxAttempts` losses in a row rejects with UNAVAILABLE: a caller may retry later. Build it once
 * per repository.
 */
export function conflictRetry(options: ConflictRetryOptions): <T>(attempt: () => Promise<TxAttempt<T>>) => Promise<T> {
  const backoff = new ExponentialBackoff({ initialDelay: 1, maxDelay: options.maxDelayMs, generator: fullJitterGenerator });
  const policy = retry(handleWhenResult((r) => !(r as TxAttempt<unknown>).committed), { maxAttempts: options.maxAttempts - 1, backoff });
  return async <T>(attempt: () => Promise<TxAttempt<T>>): Promise<T> => {
    const last = await policy.execute(attempt);
    if (!last.committed) throw errors.unavailable(`${options.store} (too much contention)`);
    return last.value;
  };
}

/**
 * Runs a call again at once, up to `retries` times, when it fails with an error that
 * `retryable` accepts (a pooled socket the peer had closed, a create another replica won).
 * Other errors reject at once, and so does any once `signal` aborts. Build it once.
 */
export function retryWhen(retryable: (err: Error) => boolean, options: { retries: number }): <T>(fn: () => Promise<T>, signal?: AbortSignal) => Promise<T> {
  const policy = retry(handleWhen(retryable), { maxAttempts: options.retries });
  return (fn, signal) => policy.execute(() => fn(), signal);
}
