/** Thrown by withTimeout when the promise took too long. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * `promise`, or a TimeoutError after `ms`: a Redis that accepts connections but does not answer
 * must not hold requests forever (ioredis has no per-command deadline by default).
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
