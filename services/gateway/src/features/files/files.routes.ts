import { once } from 'node:events';
import type { ErrorCode, Logger } from '@workspace/platform';

import type { ObjectStore } from '../../transfer/object-store.js';
import { CreateDirectoryBody, CreateDirectoryResult, DeleteFileQuery, DeleteResult, FileList, ListFilesQuery, MoveBody, MoveResult, ReadResult } from './files.schemas.js';
import { parseFileIfMatch } from '../../api/if-match.js';
import { FILE_IF_MATCH } from '../../api/request-headers.js';
import { RevisionPathQuery } from './revisions.schemas.js';
import { changesRoutes } from './changes.routes.js';
import { downloadRoute } from './download.route.js';
import { exportRoute } from './export.route.js';

import { revisionsRoutes } from './revisions.routes.js';
import { searchRoutes } from './search.routes.js';
import { checkpointsRoutes } from './checkpoints.routes.js';
import { CopyBody } from './checkpoints.schemas.js';
import { defineRoute, type RouteDef } from '../../api/route.js';
import { uploadRoute } from './upload.route.js';
import * as ex from './files.examples.js';
import { CONFLICT_MODES, type ProjectsClient, type FilesClient } from '../../clients.js';

/** What the file routes need besides the files client. */
export interface FilesRouteDeps {
  files: FilesClient;
  projects: ProjectsClient;
  /** Bytes go between the client and the store by presigned URL, never through gRPC. */
  store: ObjectStore;
  logger: Logger;
  /** An upload body that sends nothing for this long fails (docs/api/files.md#upload, UPLOAD_IDLE_TIMEOUT_MS). */
  uploadIdleTimeoutMs: number;
}

/**
 * Move and copy change the index only, in one atomic step, but a directory of 10,000 files is
 * 10,000 entries: longer than the default deadline, which would answer 503 for a move that
 * then completes.
 */
const MOVE_DEADLINE_MS = 60_000;

export const FILE_ERRORS = ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE'] as const satisfies ErrorCode[];

export function filesRoutes(deps: FilesRouteDeps): RouteDef[] {
  const { files } = deps;
  return [
    listRoute(files),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/read',
      operationId: 'readFile',
      summary: 'Read a UTF-8 text file',
      description:
        'At most MAX_READ_BYTES (default 10 MiB, inclusive); larger files answer 413 FILE_TOO_LARGE, other bytes 422 FILE_NOT_TEXT. With `revision`, ' +
        'that revision of the path (also of a deleted file).',
      tag: 'Files',
      query: RevisionPathQuery,
      example: { query: { path: '/files/notes.md' }, response: ex.readResult },
      responses: { 200: { description: 'The content', schema: ReadResult } },
      errors: [...FILE_ERRORS, 'FILE_NOT_FOUND', 'REVISION_NOT_FOUND', 'IS_A_DIRECTORY', 'FILE_TOO_LARGE', 'FILE_NOT_TEXT'],
      handler: async ({ query, call }, res) => {
        let path = '';
        const parts: Buffer[] = [];
        for await (const chunk of files.readFile({ path: query.path, revision: query.revision ?? '' }, call)) {
          path ||= chunk.path;
          parts.push(chunk.data);
        }
        res.json({ path, content: Buffer.concat(parts).toString('utf8'), encoding: 'utf-8' });
      },
    }),
    uploadRoute(deps),
    downloadRoute(files, deps.store),
    defineRoute({
      method: 'delete',
      path: '/v1/agent/files',
      operationId: 'deleteFile',
      summary: 'Delete a file, or a directory with recursive=true',
      description:
        'Deleted files go to the trash (`files/trash`) and can be restored (`files/restore`). With `permanent=true` the file or directory (with ' +
        '`recursive=true`) goes for good with every revision and trashed file at or below the path: its bytes are unreachable at once and removed from ' +
        'the store within a minute. `permanent=true` also purges a path that holds nothing but trash (a folder of it needs `recursive=true`). A folder ' +
        'created with `files/directories` that holds nothing is deleted without `recursive`. `If-Match: "<sha256>"` deletes only a file with exactly ' +
        'those bytes (412 PRECONDITION_FAILED otherwise, also for a directory or nothing there). A recursive delete or purge of a tree of more than ' +
        'MAX_TREE_ENTRIES (default 10,000) entries below `path` (a purge: or more paths with a history there) → 400 INVALID_ARGUMENT (`details.field` ' +
        '`path`, `details.limit` the bound) and nothing changes: take a folder below it. Files in the trash still count toward MAX_FILES; a ' +
        'permanent delete frees their places.',
      tag: 'Files',
      query: DeleteFileQuery,
      requestHeaders: [FILE_IF_MATCH],
      example: { query: { path: '/files/notes.md', recursive: false, permanent: false }, response: ex.deleteResult },
      responses: { 200: { description: 'Deleted', schema: DeleteResult } },
      errors: [...FILE_ERRORS, 'FILE_NOT_FOUND', 'DIRECTORY_NOT_EMPTY', 'PRECONDITION_FAILED'],
      handler: async ({ query, call, req }, res) => {
        const ifMatch = parseFileIfMatch(req.get('if-match'));
        const out = await files.deleteFile(
          { path: query.path, recursive: query.recursive ?? false, permanent: query.permanent ?? false, ...(ifMatch !== undefined && { ifMatchSha256: ifMatch }) },
          call,
        );
        res.json({ success: true, path: out.path });
      },
    }),
    moveRoute(files, 'move'),
    moveRoute(files, 'copy'),
    createDirectoryRoute(files),
    ...changesRoutes(files),
    ...revisionsRoutes(files),
    ...searchRoutes(files),
    ...checkpointsRoutes(files),
    exportRoute(files, deps.projects, deps.store, deps.logger),
  ];
}

function listRoute(files: FilesClient): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/v1/agent/files',
    operationId: 'listFiles',
    summary: 'List a directory (or one file)',
    description:
      'Entries sorted by path in UTF-8 byte order. Directories exist while they hold something; `/files` always exists. With `limit` or `cursor` the listing ' +
      'is paged: at most `limit` entries, and the answer adds `cursor` (null on the last page) and `hasMore`; the next page is asked with the same path, ' +
      'recursive and includeStats. Pages resume after the last path returned, so entries that exist throughout are listed exactly once.',
    tag: 'Files',
    query: ListFilesQuery,
    example: { query: { path: '/files', recursive: false, includeStats: true, limit: 100 }, response: ex.fileList },
    responses: { 200: { description: 'The entries (one page of them when paged)', schema: FileList } },
    errors: [...FILE_ERRORS, 'FILE_NOT_FOUND'],
    handler: async ({ query, call }, res) => {
      const recursive = query.recursive ?? false;
      const paged = query.limit !== undefined || query.cursor !== undefined;
      const request = { path: query.path ?? '/files', recursive, paged, limit: query.limit ?? 0, cursor: query.cursor ?? '', asJson: true, includeStats: query.includeStats ?? true };
      // The service renders the entries as this route's JSON: they pass through as bytes. One
      // message (up to ~1 MiB of entries) is answered whole; from the second on, the answer
      // streams, so a big listing is never copied into one buffer here (an error after that
      // point can only cut the connection, which the error handler does).
      let path = '';
      let page = { cursor: null as string | null, hasMore: false };
      let first: Buffer | undefined;
      let streaming = false;
      const head = () => Buffer.from(`{"path":${JSON.stringify(path)},"recursive":${recursive},"entries":[`);
      for await (const batch of files.listFiles(request, call)) {
        path = batch.path;
        // The cursor rides on the last message; earlier ones leave it empty.
        page = { cursor: batch.nextCursor || null, hasMore: batch.hasMore };
        if (batch.entriesJson.length === 0) continue;
        if (first === undefined) {
          first = batch.entriesJson;
          continue;
        }
        if (!streaming) {
          streaming = true;
          res.type('application/json');
          res.write(head());
          res.write(first);
        }
        res.write(COMMA);
        // As fast as the client reads: the service's stream waits meanwhile (gRPC flow control).
        // A client gone stops the listing (the call's signal ends the stream too).
        if (!res.write(batch.entriesJson) && !res.destroyed) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        if (res.destroyed) return;
      }
      const tail = Buffer.from(paged ? `],"cursor":${JSON.stringify(page.cursor)},"hasMore":${page.hasMore}}` : ']}');
      if (streaming) res.end(tail);
      else res.type('application/json').send(Buffer.concat([head(), ...(first ? [first] : []), tail]));
    },
  });
}

const COMMA = Buffer.from(',');

/** Move and copy share body, rules and answer (docs/api/files.md#move-and-copy); copy leaves the source. */
function moveRoute(files: FilesClient, verb: 'move' | 'copy'): RouteDef {
  const move = verb === 'move';
  return defineRoute({
    method: 'post',
    path: `/v1/agent/files/${verb}`,
    operationId: move ? 'moveFile' : 'copyFile',
    summary: move ? 'Move (rename) a file or a directory' : 'Copy a file or a directory',
    description:
      (move
        ? 'Atomic and index-only: no listing, read or export ever sees both trees or neither, and its cost does not grow with file sizes. A case-only rename works. '
        : 'The copy shares bytes with its source (no byte is copied); the two are independent files from then on. With `at` (a checkpoint id or a ' +
          'time) it is a fork: the copy is of the tree at `from` as it was then, its explicit folders included, also when `from` no longer exists ' +
          '(docs/api/files.md#fork); a path of the fork over 900 UTF-8 bytes → 400 INVALID_PATH. ') +
      'A file onto an existing file follows `onConflict`; a directory never merges or replaces (409 PATH_CONFLICT whatever `onConflict` says), and nothing ' +
      'goes onto a directory or under a file. A file\'s mimeType follows its new name. `If-Match: "<sha256>"` guards `from` and `ifMatchTo` the file at ' +
      '`to` (which it then replaces whatever `onConflict` says): 412 PRECONDITION_FAILED when one does not hold, and nothing changes. A tree of more ' +
      'than MAX_TREE_ENTRIES (default 10,000) entries below `from` (files and folders, as a listing counts them) → 400 INVALID_ARGUMENT ' +
      '(`details.field` `from`, `details.limit` the bound) and nothing changes: take a folder below it. ' +
      (move
        ? 'The folders a move creates at `to` (less those it leaves empty) count toward MAX_FILES: 403 QUOTA_EXCEEDED when they would pass it.'
        : 'Every file and folder a copy creates counts toward MAX_FILES (default 1,000,000) though it shares bytes: 403 QUOTA_EXCEEDED ' +
          '(`details.quota` MAX_FILES) when they would pass it, and nothing is copied.'),
    tag: 'Files',
    requestHeaders: [FILE_IF_MATCH],
    // A copy creates files; a move only renames (repeating one that succeeded → 404 for the source).
    idempotent: !move,
    body: move ? MoveBody : CopyBody,
    example: { body: ex.moveBody, response: ex.moveResult },
    responses: { 200: { description: move ? 'Moved' : 'Copied', schema: MoveResult } },
    errors: [
      ...FILE_ERRORS,
      'FILE_NOT_FOUND',
      'FILE_EXISTS',
      'PATH_CONFLICT',
      'PRECONDITION_FAILED',
      'QUOTA_EXCEEDED',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      ...(move ? [] : (['CHECKPOINT_NOT_FOUND', 'HISTORY_EXPIRED'] as const)),
    ],
    handler: async ({ body, call, req }, res) => {
      const ifMatch = parseFileIfMatch(req.get('if-match'));
      // A fork (copy only): '' copies the tree as it is now.
      const at = 'at' in body && typeof body.at === 'string' ? body.at : '';
      const request = {
        from: body.from,
        to: body.to,
        onConflict: CONFLICT_MODES[body.onConflict ?? 'error'],
        at,
        ...(ifMatch !== undefined && { ifMatchSha256: ifMatch }),
        ...(body.ifMatchTo !== undefined && { ifMatchToSha256: body.ifMatchTo }),
      };
      const ctx = { ...call, deadlineMs: MOVE_DEADLINE_MS };
      const out = await (move ? files.moveFile(request, ctx) : files.copyFile(request, ctx));
      res.json({ success: true, from: out.from, path: out.path });
    },
  });
}

/** docs/api/files.md#folders: a folder that exists, empty, until it is deleted. */
function createDirectoryRoute(files: FilesClient): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/v1/agent/files/directories',
    operationId: 'createDirectory',
    summary: 'Create a folder (with its missing parents)',
    description:
      '201 `{path, created: true}`, or 200 `{path, created: false}` when a directory is already there (`/files` too). Missing parents are created as well. A ' +
      'folder created this way exists, empty, until it is deleted (an empty one is deleted with `recursive=false`): listings show it, the changes feed ' +
      'reports it (`created`, `kind: "directory"`), and exports hold it as an entry `<name>/`. A file at the path or above it → 409 PATH_CONFLICT. ' +
      'Each folder created counts toward MAX_FILES (default 1,000,000): 403 QUOTA_EXCEEDED (`details.quota` MAX_FILES) when they would pass it, and ' +
      'nothing is created.',
    tag: 'Files',
    body: CreateDirectoryBody,
    example: { body: ex.createDirectoryBody, response: ex.createDirectoryResult },
    responses: {
      201: { description: 'Created', schema: CreateDirectoryResult },
      200: { description: 'A directory was already there', schema: CreateDirectoryResult },
    },
    errors: [...FILE_ERRORS, 'PATH_CONFLICT', 'QUOTA_EXCEEDED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
    handler: async ({ body, call }, res) => {
      const out = await files.createDirectory({ path: body.path }, call);
      res.status(out.created ? 201 : 200).json({ path: out.path, created: out.created });
    },
  });
}
