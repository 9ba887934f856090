import { z } from 'zod';

export const Usage = z
  .object({
    files: z
      .object({
        count: z.number().int().describe('Files in the workspace now'),
        bytes: z.number().int().describe('Bytes of every object the current files, retained revisions, the trash and knowledge pins reference, each distinct content once'),
        quotaBytes: z.number().int().describe('FILE_QUOTA_BYTES: the most `bytes` may reach'),
        entries: z
          .number()
          .int()
          .describe('What MAX_FILES counts: the files and folders of the workspace and the paths in the trash, each one (copies too, though they share bytes)'),
        entriesLimit: z.number().int().describe('MAX_FILES: the most `entries` may reach'),
      })
      .strict(),
    checkpoints: z
      .object({
        count: z.number().int().describe('Checkpoints the user has (docs/api/files.md#checkpoints)'),
        bytes: z.number().int().describe('Bytes of the distinct contents they hold, each once; already part of `files.bytes`, not in addition to it'),
        limit: z.number().int().describe('MAX_CHECKPOINTS: the most the user may have'),
      })
      .strict(),
    agents: z
      .object({
        count: z.number().int().describe('Agents the user has'),
        limit: z.number().int().describe('MAX_AGENTS: the most the user may have'),
      })
      .strict(),
  })
  .strict()
  .meta({
    id: 'Usage',
    examples: [{ files: { count: 42, bytes: 1_048_576, quotaBytes: 10_737_418_240, entries: 57, entriesLimit: 1_000_000 }, checkpoints: { count: 2, bytes: 524_288, limit: 100 }, agents: { count: 3, limit: 1000 } }],
  });
