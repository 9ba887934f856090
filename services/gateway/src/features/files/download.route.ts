import type { ObjectStore } from '../../transfer/object-store.js';
import { sendFile } from '../../transfer/send-file.js';
import { RevisionPathQuery } from './revisions.schemas.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import { IF_MODIFIED_SINCE, IF_NONE_MATCH, IF_RANGE, RANGE } from '../../api/request-headers.js';
import type { FilesClient } from '../../clients.js';

export function downloadRoute(files: FilesClient, store: ObjectStore): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/v1/agent/files/download',
    operationId: 'downloadFile',
    summary: 'Download a file (streamed)',
    description:
      'Sends ETag (`"<sha256>"`: equal bytes have equal ETags), Last-Modified, Accept-Ranges: bytes and Content-Disposition: attachment. One `Range` of ' +
      'bytes answers 206; multiple, malformed or unsatisfiable ranges are ignored and the whole file is sent. `If-None-Match` (or `If-Modified-Since` ' +
      'without it) answers 304; `If-Range` is honoured. With `revision`, that revision of the path (also of a deleted file).',
    tag: 'Files',
    query: RevisionPathQuery,
    requestHeaders: [RANGE, IF_RANGE, IF_NONE_MATCH, IF_MODIFIED_SINCE],
    example: { query: { path: '/files/notes.md' } },
    responses: {
      200: {
        description: 'The file',
        contentType: 'application/octet-stream',
        headers: { ETag: '"<sha256 of the bytes>"', 'Last-Modified': 'HTTP date', 'Content-Disposition': 'attachment; filename="…"; filename*=UTF-8\'\'…' },
      },
      206: { description: 'One range of the file', contentType: 'application/octet-stream', headers: { 'Content-Range': 'bytes start-end/size' } },
      304: { description: 'Not modified (If-None-Match matched)', headers: { ETag: '"<sha256 of the bytes>"' } },
    },
    errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE', 'FILE_NOT_FOUND', 'REVISION_NOT_FOUND', 'IS_A_DIRECTORY'],
    handler: async ({ query, call, req }, res) => {
      const opened = await files.openDownload({ path: query.path, revision: query.revision ?? '' }, call);
      await sendFile(store, opened, { req, res, signal: call.signal });
    },
  });
}
