import { AppError, errors, type ServiceClient } from '@workspace/platform';
import { EntryType, OnConflict, type FileEntry, type FilesServiceService, type UploadFileRequest } from '@workspace/proto/workspace/files/v1/files';
import { attachment, notModified, requestedRange } from '../http/download.js';
import { sendChunks, TRANSFER_DEADLINE_MS, writeHead } from '../http/send-chunks.js';
import { readUploadForm, type FileHandler } from '../http/upload-form.js';
import {
  DeleteFileQuery,
  DeleteResult,
  FileList,
  ListFilesQuery,
  PathQuery,
  ReadResult,
  UploadForm,
  UploadQuery,
  UploadResult,
} from '../schemas/files.schemas.js';
import type { ProjectsClient } from './projects.routes.js';
import { exportRoute } from './export.route.js';
import { defineRoute, type RouteDef } from './route.js';

export type FilesClient = ServiceClient<typeof FilesServiceService>;

const CONFLICT_MODES: Record<string, OnConflict> = {
  error: OnConflict.ON_CONFLICT_ERROR,
  overwrite: OnConflict.ON_CONFLICT_OVERWRITE,
  uuid: OnConflict.ON_CONFLICT_UUID,
};

function entryJson(e: FileEntry, includeStats: boolean) {
  const type = e.type === EntryType.ENTRY_TYPE_DIRECTORY ? 'directory' : 'file';
  const base = { path: e.path, name: e.name, type };
  return type === 'file' && includeStats ? { ...base, size: e.size, modifiedAt: e.modifiedAt, mimeType: e.mimeType } : base;
}

export function filesRoutes(files: FilesClient, projects: ProjectsClient): RouteDef[] {
  const tag = 'Files';
  const common = ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE'] as const;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent/files',
      operationId: 'listFiles',
      summary: 'List a directory (or one file)',
      description: 'Entries sorted by path in UTF-8 byte order. Directories exist while they hold something; `/files` always exists.',
      tag,
      query: ListFilesQuery,
      responses: { 200: { description: 'The entries', schema: FileList } },
      errors: [...common, 'FILE_NOT_FOUND'],
      handler: async ({ query, call }, res) => {
        const recursive = query.recursive ?? false;
        const includeStats = query.includeStats ?? true;
        let path = '';
        const entries: ReturnType<typeof entryJson>[] = [];
        for await (const batch of files.listFiles({ path: query.path ?? '/files', recursive }, call)) {
          path = batch.path;
          for (const e of batch.entries) entries.push(entryJson(e, includeStats));
        }
        res.json({ path, recursive, entries });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/read',
      operationId: 'readFile',
      summary: 'Read a UTF-8 text file',
      description: 'At most MAX_READ_BYTES (default 10 MiB, inclusive); larger files answer 413 FILE_TOO_LARGE, other bytes 422 FILE_NOT_TEXT.',
      tag,
      query: PathQuery,
      responses: { 200: { description: 'The content', schema: ReadResult } },
      errors: [...common, 'FILE_NOT_FOUND', 'IS_A_DIRECTORY', 'FILE_TOO_LARGE', 'FILE_NOT_TEXT'],
      handler: async ({ query, call }, res) => {
        let path = '';
        const parts: Buffer[] = [];
        for await (const chunk of files.readFile({ path: query.path }, call)) {
          path ||= chunk.path;
          parts.push(chunk.data);
        }
        res.json({ path, content: Buffer.concat(parts).toString('utf8'), encoding: 'utf-8' });
      },
    }),
    uploadRoute(files),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/download',
      operationId: 'downloadFile',
      summary: 'Download a file (streamed)',
      description:
        'Sends ETag, Last-Modified, Accept-Ranges: bytes and Content-Disposition: attachment. One `Range` of bytes answers 206; multiple, malformed or ' +
        'unsatisfiable ranges are ignored and the whole file is sent. `If-None-Match` (or `If-Modified-Since` without it) answers 304; `If-Range` is honoured.',
      tag,
      query: PathQuery,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream', headers: { ETag: 'Content validator', 'Content-Disposition': 'attachment; filename="…"; filename*=UTF-8\'\'…' } },
        206: { description: 'One range of the file', contentType: 'application/octet-stream', headers: { 'Content-Range': 'bytes start-end/size' } },
        304: { description: 'Not modified (If-None-Match matched)' },
      },
      errors: [...common, 'FILE_NOT_FOUND', 'IS_A_DIRECTORY'],
      handler: async ({ query, call, req }, res) => {
        const file = await files.statFile({ path: query.path }, call);
        const etag = `"${file.etag}"`;
        const lastModified = new Date(file.modifiedAt);
        const validators = { ETag: etag, 'Last-Modified': lastModified.toUTCString(), 'Cache-Control': 'private, no-cache' };
        if (notModified(req, etag, lastModified)) {
          writeHead(res, 304, validators);
          res.end();
          return;
        }
        const range = requestedRange(req, file.size, etag, lastModified);
        const length = range ? range.end - range.start + 1 : file.size;
        const headers = {
          ...validators,
          'Content-Type': file.mimeType,
          'Content-Length': length,
          'Content-Disposition': attachment(file.name),
          'Accept-Ranges': 'bytes',
          ...(range && { 'Content-Range': `bytes ${range.start}-${range.end}/${file.size}` }),
        };
        const status = range ? 206 : 200;
        if (req.method === 'HEAD' || length === 0) {
          writeHead(res, status, headers);
          res.end();
          return;
        }
        const chunks = files.downloadFile({ path: file.path, offset: range?.start ?? 0, length: range ? length : 0, etag: file.etag }, { ...call, deadlineMs: TRANSFER_DEADLINE_MS });
        await sendChunks(res, chunks, headers, status);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agent/files',
      operationId: 'deleteFile',
      summary: 'Delete a file, or a directory with recursive=true',
      tag,
      query: DeleteFileQuery,
      responses: { 200: { description: 'Deleted', schema: DeleteResult } },
      errors: [...common, 'FILE_NOT_FOUND', 'DIRECTORY_NOT_EMPTY'],
      handler: async ({ query, call }, res) => {
        const out = await files.deleteFile({ path: query.path, recursive: query.recursive ?? false }, call);
        res.json({ success: true, path: out.path });
      },
    }),
    exportRoute(files, projects),
  ];
}

function uploadRoute(files: FilesClient): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/v1/agent/files/upload',
    operationId: 'uploadFile',
    summary: 'Upload one file (multipart/form-data, streamed)',
    description:
      '`path` and `onConflict` (form fields before `file`, or query parameters) then exactly one `file` part. Over MAX_UPLOAD_BYTES (default 5 GiB) → 413 and ' +
      'nothing stored; a failed or aborted upload leaves nothing, and a failed overwrite keeps the old content. Of concurrent `error` uploads to one new path exactly one succeeds.',
    tag: 'Files',
    query: UploadQuery,
    rawBody: { contentType: 'multipart/form-data', schema: UploadForm, description: 'path?, onConflict?, then file' },
    responses: { 200: { description: 'Stored', schema: UploadResult } },
    errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'FILE_EXISTS', 'PATH_CONFLICT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNAVAILABLE'],
    handler: async ({ query, call, req }, res) => {
      if (!req.is('multipart/form-data')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'an upload must be multipart/form-data');
      const upload: FileHandler<{ path: string; size: number; mimeType: string }> = async (fields, file, formDone) => {
        const mode = CONFLICT_MODES[fields.onConflict ?? 'error'];
        if (mode === undefined) throw errors.invalidArgument('onConflict must be error, overwrite or uuid', 'onConflict');
        async function* requests(): AsyncIterable<UploadFileRequest> {
          yield { part: { $case: 'header', value: { path: fields.path, filename: file.filename, onConflict: mode! } } };
          for await (const chunk of file.stream) yield { part: { $case: 'data', value: chunk as Buffer } };
          // Only a form that ended cleanly ends the stream; anything else cancels the upload.
          await formDone;
        }
        return files.uploadFile(requests(), { ...call, deadlineMs: TRANSFER_DEADLINE_MS });
      };
      const stored = await readUploadForm(req, res, { path: query.path, onConflict: query.onConflict }, upload);
      res.json({ success: true, path: stored.path, size: stored.size, mimeType: stored.mimeType });
    },
  });
}
