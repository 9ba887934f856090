import { ERROR_CODES } from '@workspace/platform';
import { z } from 'zod';

/** `true` / `false` in a query string. */
export const booleanQuery = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .describe('"true" or "false"');

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
