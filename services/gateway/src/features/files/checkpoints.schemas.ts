import { z } from 'zod';
import { timestamp, wellFormed, workspacePath } from '../../api/schemas.js';
import { MoveBody } from './files.schemas.js';

/** Any string is looked up: one that is not the user's checkpoint is 404, as for every other id. */
export const CheckpointIdParams = z.object({ checkpointId: z.string().describe('`ckp_` + 32 lowercase hex') }).strict();

const pastState = wellFormed(z.string().min(1).max(100));

export const CreateCheckpointBody = z
  .object({
    path: workspacePath.optional().describe('The tree to record, default `/files`: a directory or a file that exists'),
    label: wellFormed(z.string().max(200)).optional().describe('Free text, at most 200 characters, default ""'),
  })
  .strict()
  .meta({ id: 'CreateCheckpointRequest', examples: [{ path: '/files/projects/Home', label: 'before the refactor' }] });

export const Checkpoint = z
  .object({
    checkpointId: z.string().describe('`ckp_` + 32 lowercase hex'),
    path: z.string().describe('The tree it records'),
    label: z.string(),
    createdAt: timestamp,
    files: z.number().int().describe('The files it records (folders are not counted)'),
    bytes: z.number().int().describe('The bytes of their distinct contents (each once)'),
  })
  .meta({
    id: 'Checkpoint',
    examples: [{ checkpointId: 'ckp_3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c', path: '/files/projects/Home', label: 'before the refactor', createdAt: '2024-05-01T12:00:00.000Z', files: 12, bytes: 48213 }],
  });

export const CheckpointsQuery = z.object({ path: workspacePath.optional().describe('Only checkpoints taken at or below this path; default `/files` (all)') }).strict();

export const CheckpointList = z.object({ checkpoints: z.array(Checkpoint).describe('Newest first') }).meta({ id: 'CheckpointList' });

export const RewindBody = z
  .object({
    path: workspacePath.describe('The tree to rewind (a directory, `/files` included, or a file)'),
    to: pastState.describe(
      'A checkpoint id taken at `path` or above it, or an ISO 8601 time with a zone (e.g. `2024-05-01T12:00:00.000Z`) within FILE_REVISION_DAYS; a time ahead of the clock means now',
    ),
  })
  .strict()
  .meta({ id: 'RewindRequest', examples: [{ path: '/files/projects/Home', to: 'ckp_3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c' }, { path: '/files/src', to: '2024-05-01T12:00:00.000Z' }] });

export const RewindResult = z
  .object({
    success: z.literal(true),
    path: z.string(),
    to: z.string().describe('As sent'),
    restored: z.number().int().describe('Files of then that were missing or differed, back with their content (a moved file counts here and in `removed`)'),
    removed: z.number().int().describe('Files that did not exist then, sent to the trash (restorable)'),
    unchanged: z.number().int().describe('Files with the same bytes at the same path'),
    checkpointId: z.string().describe('A checkpoint of `path` taken just before the rewind: rewind to it to undo'),
  })
  .meta({
    id: 'RewindResult',
    examples: [{ success: true, path: '/files/projects/Home', to: 'ckp_3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c', restored: 3, removed: 1, unchanged: 8, checkpointId: 'ckp_9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f' }],
  });

/** `at` on a copy: a fork of the tree as it was (docs/api/files.md#fork). */
export const forkAt = pastState.describe(
  'Copy the tree at `from` as it was at this checkpoint id (taken at `from` or above it) or ISO 8601 time (within FILE_REVISION_DAYS); `from` need not exist now. Copy only',
);

export const CopyBody = MoveBody.extend({ at: forkAt.optional() })
  .strict()
  .meta({
    id: 'CopyFileRequest',
    examples: [
      { from: '/files/drafts/report.md', to: '/files/reports/2024.md', onConflict: 'error' },
      { from: '/files/src', to: '/files/src-before', at: 'ckp_3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c' },
    ],
  });
