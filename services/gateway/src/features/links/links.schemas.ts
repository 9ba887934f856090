import { z } from 'zod';
import { timestamp, workspacePath } from '../../api/schemas.js';

export const LINK_MIN_SECONDS = 60;
export const LINK_MAX_SECONDS = 86_400;

export const CreateLinkBody = z
  .object({
    path: workspacePath.describe('A file (not a directory)'),
    expiresIn: z
      .number()
      .int()
      .min(LINK_MIN_SECONDS)
      .max(LINK_MAX_SECONDS)
      .default(3600)
      .describe('Seconds the link works, 60–86,400; 3,600 when absent'),
  })
  .strict()
  .meta({ id: 'CreateLinkRequest', examples: [{ path: '/files/reports/2024.pdf', expiresIn: 600 }] });

export const LinkResult = z
  .object({
    url: z.string().describe('Absolute URL on the gateway; downloads the bytes the file had when the link was made, with no token'),
    expiresAt: timestamp.describe('When the link stops working'),
  })
  .meta({ id: 'TemporaryLink', examples: [{ url: 'https://api.example.com/v1/agent/files/links/eyJhbGciOi…', expiresAt: '2026-01-01T12:00:00.000Z' }] });

export const LinkParams = z.object({ token: z.string().describe('The signed link token; anything that is not a genuine, unexpired one is 404 LINK_NOT_FOUND') }).strict();
