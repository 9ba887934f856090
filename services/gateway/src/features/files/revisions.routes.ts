import { parseFileIfMatch } from '../../api/if-match.js';
import { FILE_IF_MATCH } from '../../api/request-headers.js';
import { RestoreBody, RestoreResult, RevisionList, RevisionsQuery, TrashList, TrashQuery } from './revisions.schemas.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import * as ex from './files.examples.js';
import type { FilesClient } from '../../clients.js';

/**
 * A recursive restore is one atomic step over every trashed file below the path: 10,000 files
 * take longer than the default deadline, which would answer 503 for a restore that then completes.
 */
const RESTORE_DEADLINE_MS = 60_000;

const COMMON_ERRORS = ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE'] as const;

/** Revisions, trash and restore (docs/api/files.md#revisions). */
export function revisionsRoutes(files: FilesClient): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/revisions',
      operationId: 'listFileRevisions',
      summary: 'The revisions of a file, newest first',
      description:
        'Every write of the path (upload, overwrite, a copy or move onto it, a restore) is a revision, and every delete a deletion (`deleted: true`, no ' +
        'content). At most 100, newest first; also for a deleted file. Read or download one with `revision`; bring one back with `files/restore`.',
      tag: 'Files',
      query: RevisionsQuery,
      example: { query: { path: '/files/notes.md' }, response: ex.revisionList },
      responses: { 200: { description: 'The revisions', schema: RevisionList } },
      errors: [...COMMON_ERRORS, 'FILE_NOT_FOUND'],
      handler: async ({ query, call }, res) => {
        const out = await files.listRevisions({ path: query.path, revision: '' }, call);
        const revisions = out.revisions.map((r) =>
          r.deleted ? { revision: r.revision, deleted: true, modifiedAt: r.modifiedAt } : { revision: r.revision, deleted: false, modifiedAt: r.modifiedAt, size: r.size, sha256: r.sha256, mimeType: r.mimeType },
        );
        res.json({ path: out.path, revisions });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/trash',
      operationId: 'listTrash',
      summary: 'Deleted files that can be restored',
      description:
        'The deleted files directly in `path` (with `recursive=true`: anywhere below it) whose path holds no file now, newest deletion first. Each names ' +
        'the `revision` of its last content, what a restore brings back. Kept for FILE_REVISION_DAYS (default 30).',
      tag: 'Files',
      query: TrashQuery,
      example: { query: { path: '/files', recursive: false }, response: ex.trashList },
      responses: { 200: { description: 'The trash', schema: TrashList } },
      errors: [...COMMON_ERRORS],
      handler: async ({ query, call }, res) => {
        const recursive = query.recursive ?? false;
        let path = '';
        const entries: unknown[] = [];
        for await (const batch of files.listTrash({ path: query.path ?? '/files', recursive }, call)) {
          path = batch.path;
          entries.push(...batch.entries);
        }
        res.json({ path, recursive, entries });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent/files/restore',
      operationId: 'restoreFile',
      summary: 'Restore a revision of a file, or everything deleted below a folder',
      description:
        '`{path, revision}`: that revision\'s bytes become the file at `path` again (a new revision), whether a file is there now or it was deleted. ' +
        '`{path, recursive: true}`: every file in the trash at or below `path` comes back with its last content, in one atomic step (the undo of a ' +
        'recursive delete); one change in the feed and one `file.created` event for the path. A directory at a restored path, or a file above it, ' +
        'answers 409 PATH_CONFLICT and restores nothing. When two trashed files block each other (a file, and one below it from when it was a folder), ' +
        'the later deletion comes back and the other stays in the trash. `If-Match: "<sha256>"` restores only onto a file with exactly those bytes at ' +
        '`path` (412 PRECONDITION_FAILED otherwise, also when no file is there). `recursive` over more than MAX_TREE_ENTRIES (default 10,000) paths in ' +
        'the trash at or below `path` → 400 INVALID_ARGUMENT (`details.field` `path`, `details.limit`). Restored files leave the trash, so a restore ' +
        'adds to MAX_FILES only the folders they need again: 403 QUOTA_EXCEEDED when those would pass it, and nothing is restored.',
      tag: 'Files',
      body: RestoreBody,
      requestHeaders: [FILE_IF_MATCH],
      example: { body: ex.restoreBody, response: ex.restoreResult },
      responses: { 200: { description: 'Restored', schema: RestoreResult } },
      errors: [...COMMON_ERRORS, 'REVISION_NOT_FOUND', 'PATH_CONFLICT', 'PRECONDITION_FAILED', 'QUOTA_EXCEEDED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      handler: async ({ body, call, req }, res) => {
        const recursive = body.recursive === true;
        const ifMatch = parseFileIfMatch(req.get('if-match'));
        const request = { path: body.path, revision: body.revision ?? '', recursive, ...(ifMatch !== undefined && { ifMatchSha256: ifMatch }) };
        const out = await files.restoreFile(request, { ...call, deadlineMs: RESTORE_DEADLINE_MS });
        if (recursive) res.json({ success: true, path: out.path, restored: out.restored });
        else res.json({ success: true, path: out.path, size: out.size, mimeType: out.mimeType, sha256: out.sha256, revision: out.revision });
      },
    }),
  ];
}
