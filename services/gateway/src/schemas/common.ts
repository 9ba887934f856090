import { ERROR_CODES } from '@workspace/platform';
import { z } from 'zod';

/** `true` / `false` in a query string. */
export const booleanQuery = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .describe('"true" or "false"');

/** A decimal integer of `min`–`max` in a query string (no sign, no leading zeros, no exponent). */
export function integerQuery(name: string, min: number, max: number) {
  return z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, `${name} must be an integer`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be ${min}–${max}`);
}

/**
 * A lone surrogate (`"\ud800"` is valid JSON) cannot travel as UTF-8: gRPC would store U+FFFD
 * in its place and answer 2xx with text the client never sent. Refused instead (400).
 */
export const LONE_SURROGATE = /\p{Cs}/u;

export function wellFormed<T extends z.ZodString>(schema: T): T {
  return schema.refine((value) => !LONE_SURROGATE.test(value), 'must be valid Unicode (no lone surrogates)') as T;
}

/** Whether any string or key in a JSON value holds a lone surrogate (iterative: any depth). */
export function hasLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (LONE_SURROGATE.test(next)) return true;
    } else if (Array.isArray(next)) {
      pending.push(...next);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, member] of Object.entries(next)) pending.push(key, member);
    }
  }
  return false;
}

export const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string(),
      requestId: z.string(),
      details: z.record(z.string(), z.string()).optional(),
    }),
  })
  .meta({ id: 'Error' });
