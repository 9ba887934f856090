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
