import { z } from 'zod';
import { booleanQuery, integerQuery, projectName, timestamp, workspacePath } from '../../api/schemas.js';

const sha256 = z.string().describe('SHA-256 of the bytes, 64 lowercase hex');

export const onConflict = z
  .enum(['error', 'overwrite', 'uuid'])
  .describe('What to do when a file exists at the destination: `error` (409 FILE_EXISTS, the default), `overwrite`, or `uuid` (store as `<stem>-<uuid v4>.<ext>`)');

export const FileEntry = z
  .object({
    path: z.string(),
    name: z.string().describe('Last path segment'),
    type: z.enum(['file', 'directory']),
    size: z.number().int().optional().describe('Bytes; files only, and only with includeStats=true'),
    modifiedAt: timestamp.optional().describe('Files only, and only with includeStats=true'),
    mimeType: z.string().optional().describe('From the name\'s extension; files only, and only with includeStats=true'),
    sha256: sha256.optional().describe('SHA-256 of the bytes, 64 lowercase hex (the download\'s ETag); files only, and only with includeStats=true'),
  })
  .meta({ id: 'FileEntry' });

export const FileList = z
  .object({
    path: z.string(),
    recursive: z.boolean(),
    entries: z.array(FileEntry).describe('Sorted by path in UTF-8 byte order'),
    cursor: z.string().nullable().optional().describe('Paged listings only (limit or cursor given): pass it as `cursor` for the next page; null on the last page'),
    hasMore: z.boolean().optional().describe('Paged listings only: whether another page follows'),
  })
  .meta({ id: 'FileList' });

export const ReadResult = z
  .object({ path: z.string(), content: z.string(), encoding: z.literal('utf-8') })
  .meta({ id: 'FileContent' });

export const UploadResult = z
  .object({ success: z.literal(true), path: z.string(), size: z.number().int(), mimeType: z.string(), sha256 })
  .meta({ id: 'UploadResult', examples: [{ success: true, path: '/files/notes.md', size: 5, mimeType: 'text/markdown', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' }] });

export const DeleteResult = z.object({ success: z.literal(true), path: z.string() }).meta({ id: 'DeleteResult' });

export const ListFilesQuery = z
  .object({
    path: workspacePath.optional().describe('default `/files`; a file lists as its one entry'),
    recursive: booleanQuery.optional().describe('default false: every descendant, directories included'),
    includeStats: booleanQuery.optional().describe('default true; false leaves only path, name and type'),
    limit: integerQuery('limit', 1, 10_000)
      .optional()
      .describe('1–10,000: page the listing, at most this many entries per page (default 1,000 when only `cursor` is given); the answer adds `cursor` and `hasMore`'),
    cursor: z
      .string()
      .min(1)
      .optional()
      .describe('The `cursor` of the previous page, asked with the same path, recursive and includeStats; opaque; one altered or issued for another listing → 400 INVALID_ARGUMENT'),
  })
  .strict();

export const PathQuery = z.object({ path: workspacePath }).strict();

export const DeleteFileQuery = z
  .object({
    path: workspacePath,
    recursive: booleanQuery.optional().describe('default false: a directory answers 409 DIRECTORY_NOT_EMPTY. true: the tree too, at most MAX_TREE_ENTRIES (default 10,000) entries below `path` (more → 400 INVALID_ARGUMENT, nothing deleted)'),
    permanent: booleanQuery.optional().describe('default false: into the trash. true: for good, with every revision and trashed file there'),
  })
  .strict();

export const UploadQuery = z
  .object({
    path: workspacePath.optional().describe('Destination, instead of the `path` form field'),
    onConflict: onConflict.optional().describe('Instead of the `onConflict` form field'),
  })
  .strict();

export const UploadForm = z.object({
  path: workspacePath
    .optional()
    .describe('Must come before `file`. Absent → `/files/<filename>`; ending in `/` or naming an existing directory → `<path>/<filename>`; else the full destination'),
  onConflict: onConflict.optional().describe('Must come before `file`'),
  file: z.string().meta({ format: 'binary' }).describe('The file, last; its file name (UTF-8) names it'),
});

export const MoveBody = z
  .object({
    from: workspacePath.describe('An existing file or directory, not `/files`; a directory of at most MAX_TREE_ENTRIES (default 10,000) entries below it (more → 400 INVALID_ARGUMENT, `details.field` `from`)'),
    to: workspacePath.describe('The full new path: not `/files`, not `from` or below it'),
    onConflict: onConflict
      .optional()
      .describe('For a file onto an existing file: `error` (409 FILE_EXISTS, the default), `overwrite`, or `uuid`. A directory never merges or replaces: 409 PATH_CONFLICT'),
    ifMatchTo: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 of 64 lowercase hex digits')
      .optional()
      .describe(
        'The sha256 (64 lowercase hex, no quotes) the file at `to` must have: it is then replaced whatever `onConflict` says; else (also when no file is ' +
          'there) 412 PRECONDITION_FAILED and nothing changes',
      ),
  })
  .strict()
  .meta({ id: 'MoveFileRequest', examples: [{ from: '/files/drafts/report.md', to: '/files/reports/2024.md', onConflict: 'error' }] });

export const MoveResult = z
  .object({ success: z.literal(true), from: z.string().describe('The source, normalized'), path: z.string().describe('Where it landed (differs from `to` with onConflict=uuid)') })
  .meta({ id: 'MoveFileResult', examples: [{ success: true, from: '/files/drafts/report.md', path: '/files/reports/2024.md' }] });

export const CreateDirectoryBody = z
  .object({ path: workspacePath.describe('The folder to create (missing parents are created too)') })
  .strict()
  .meta({ id: 'CreateDirectoryRequest', examples: [{ path: '/files/reports/2024' }] });

export const CreateDirectoryResult = z
  .object({ path: z.string().describe('The folder, normalized'), created: z.boolean().describe('false when a directory was already there') })
  .meta({ id: 'CreateDirectoryResult', examples: [{ path: '/files/reports/2024', created: true }] });

export const ExportQuery = z.object({ name: projectName.describe('Project name (case-insensitive)') }).strict();
