import { z } from 'zod';
import { booleanQuery, timestamp, wellFormed, workspacePath } from '../../api/schemas.js';

const sha256 = z.string().describe('SHA-256 of the bytes, 64 lowercase hex');

/** Any string is looked up: one that is not a revision of the path is 404, as the contract says. */
export const revisionId = wellFormed(z.string().min(1).max(100)).describe('A revision id (`rev_` + 32 lowercase hex) from `files/revisions` or the trash');

/** Read and download: the current file, or one revision of the path. */
export const RevisionPathQuery = z
  .object({
    path: workspacePath,
    revision: revisionId.optional().describe('Read this revision of the path instead of the file there now (also of a deleted file); 404 REVISION_NOT_FOUND when it is not one of the path\'s'),
  })
  .strict();

export const RevisionsQuery = z.object({ path: workspacePath.describe('A file path; it may be deleted now') }).strict();

export const FileRevision = z
  .object({
    revision: z.string().describe('`rev_` + 32 lowercase hex'),
    deleted: z.boolean().describe('A deletion of the file (no content)'),
    modifiedAt: timestamp.describe('The content\'s modification time; for a deletion, when it happened'),
    size: z.number().int().optional().describe('Bytes; not for a deletion'),
    sha256: sha256.optional().describe('Not for a deletion'),
    mimeType: z.string().optional().describe('From the path\'s name; not for a deletion'),
  })
  .meta({ id: 'FileRevision' });

export const RevisionList = z
  .object({ path: z.string(), revisions: z.array(FileRevision).describe('Newest first, at most 100') })
  .meta({
    id: 'FileRevisionList',
    examples: [
      {
        path: '/files/notes.md',
        revisions: [
          { revision: 'rev_5b0c1d0e6a7f48e2b9c3d4e5f6a7b8c9', deleted: true, modifiedAt: '2024-05-02T09:00:00.000Z' },
          { revision: 'rev_0f1e2d3c4b5a69788796a5b4c3d2e1f0', deleted: false, modifiedAt: '2024-05-01T12:00:00.000Z', size: 5, sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', mimeType: 'text/markdown' },
        ],
      },
    ],
  });

export const TrashQuery = z
  .object({
    path: workspacePath.optional().describe('default `/files`; it need not exist'),
    recursive: booleanQuery.optional().describe('default false: only files directly in `path`; true: anywhere below it'),
  })
  .strict();

export const TrashEntry = z
  .object({
    path: z.string(),
    name: z.string().describe('Last path segment'),
    size: z.number().int().describe('Bytes of the last content'),
    sha256,
    mimeType: z.string(),
    deletedAt: timestamp,
    revision: z.string().describe('The last content\'s revision: what a restore brings back'),
  })
  .meta({ id: 'TrashEntry' });

export const TrashList = z
  .object({ path: z.string(), recursive: z.boolean(), entries: z.array(TrashEntry).describe('Newest deletion first') })
  .meta({ id: 'TrashList' });

export const RestoreBody = z
  .object({
    path: workspacePath.describe('The file to restore, or with `recursive` the folder (or file) whose trashed files to restore'),
    revision: revisionId.optional().describe('The revision whose bytes become the file at `path` (404 REVISION_NOT_FOUND when it is not one of the path\'s); not with `recursive`'),
    recursive: z
      .boolean()
      .optional()
      .describe('true: restore every file in the trash at or below `path` to its last content, in one atomic step (at most MAX_TREE_ENTRIES, default 10,000, paths in the trash there; more → 400 INVALID_ARGUMENT); no `revision` then'),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.recursive === true && value.revision !== undefined) ctx.addIssue({ code: 'custom', path: ['revision'], message: 'must be absent when recursive is true' });
    if (value.recursive !== true && value.revision === undefined) ctx.addIssue({ code: 'custom', path: ['revision'], message: 'is required unless recursive is true' });
  })
  .meta({
    id: 'RestoreRequest',
    examples: [{ path: '/files/notes.md', revision: 'rev_0f1e2d3c4b5a69788796a5b4c3d2e1f0' }, { path: '/files/reports', recursive: true }],
  });

export const RestoreResult = z
  .object({
    success: z.literal(true),
    path: z.string(),
    size: z.number().int().optional().describe('One revision restored: the file as it is now'),
    mimeType: z.string().optional(),
    sha256: sha256.optional(),
    revision: z.string().optional().describe('One revision restored: the new revision the restore made'),
    restored: z.number().int().optional().describe('Recursive: how many files were restored (0 when the trash held none there)'),
  })
  .meta({
    id: 'RestoreResult',
    examples: [
      { success: true, path: '/files/notes.md', size: 5, mimeType: 'text/markdown', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', revision: 'rev_9a8b7c6d5e4f30211203f4e5d6c7b8a9' },
      { success: true, path: '/files/reports', restored: 1000 },
    ],
  });
