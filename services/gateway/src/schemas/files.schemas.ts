import { z } from 'zod';
import { booleanQuery, timestamp } from './common.js';
import { projectName } from './projects.schemas.js';

export const workspacePath = z
  .string()
  .describe(
    'Absolute workspace path: `/files` or below it. A trailing `/` is dropped. Rejected (400 INVALID_PATH): anything outside `/files`, ' +
      'empty, `.` or `..` segments, backslashes, control characters, a segment over 255 UTF-8 bytes, a path over 900 UTF-8 bytes. Case-sensitive.',
  );

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
  })
  .meta({ id: 'FileEntry' });

export const FileList = z
  .object({ path: z.string(), recursive: z.boolean(), entries: z.array(FileEntry).describe('Sorted by path in UTF-8 byte order') })
  .meta({ id: 'FileList' });

export const ReadResult = z
  .object({ path: z.string(), content: z.string(), encoding: z.literal('utf-8') })
  .meta({ id: 'FileContent' });

export const UploadResult = z
  .object({ success: z.literal(true), path: z.string(), size: z.number().int(), mimeType: z.string() })
  .meta({ id: 'UploadResult' });

export const DeleteResult = z.object({ success: z.literal(true), path: z.string() }).meta({ id: 'DeleteResult' });

export const ListFilesQuery = z
  .object({
    path: workspacePath.optional().describe('default `/files`; a file lists as its one entry'),
    recursive: booleanQuery.optional().describe('default false: every descendant, directories included'),
    includeStats: booleanQuery.optional().describe('default true; false leaves only path, name and type'),
  })
  .strict();

export const PathQuery = z.object({ path: workspacePath }).strict();

export const DeleteFileQuery = z
  .object({ path: workspacePath, recursive: booleanQuery.optional().describe('default false: a directory answers 409 DIRECTORY_NOT_EMPTY') })
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

export const ExportQuery = z.object({ name: projectName.describe('Project name (case-insensitive)') }).strict();
