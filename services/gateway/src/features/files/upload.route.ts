import type { Request } from 'express';
import { AppError } from '@workspace/platform';
import type { UploadFileResponse } from '@workspace/proto/workspace/files/v1/files';
import { readUploadForm, type FileHandler } from '../../transfer/upload-form.js';
import { UploadForm, UploadQuery, UploadResult } from './files.schemas.js';
import { UploadSession, type UploadDeps } from '../../transfer/upload-session.js';

import { parseFileIfMatch, parseIfNoneMatchStar } from '../../api/if-match.js';
import { FILE_IF_MATCH, UPLOAD_IF_NONE_MATCH } from '../../api/request-headers.js';
import { defineRoute, type RouteDef, type RouteInput } from '../../api/route.js';
import * as ex from './files.examples.js';

type Call = RouteInput<unknown, unknown, unknown>['call'];

/** The upload session's parts, and how long a body may send nothing. */
export interface UploadRouteDeps extends UploadDeps {
  uploadIdleTimeoutMs: number;
}

export function uploadRoute(deps: UploadRouteDeps): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/v1/agent/files/upload',
    operationId: 'uploadFile',
    summary: 'Upload one file (multipart/form-data, streamed)',
    description:
      '`path` and `onConflict` (form fields before `file`, or query parameters) then exactly one `file` part. Over MAX_UPLOAD_BYTES (default 5 GiB) → 413 and ' +
      'nothing stored; a failed or aborted upload leaves nothing, and a failed overwrite keeps the old content. The file is stored only once the multipart ' +
      'closing delimiter has arrived: a body that ends without it → 400, and one that sends nothing for UPLOAD_IDLE_TIMEOUT_MS (default 30 s) → 400 and the ' +
      'connection is closed. Of concurrent `error` uploads to one new path exactly one succeeds. At most MAX_CONCURRENT_UPLOADS (default 8) uploads of one user ' +
      'run at once, across every replica: one more → 429 RATE_LIMITED. The bytes reserve room in FILE_QUOTA_BYTES as they stream: uploads that together would ' +
      'pass it are refused (403 QUOTA_EXCEEDED) before their bytes are stored, and a failed upload gives its reservation back. `If-Match: "<sha256>"` stores ' +
      'the file only onto a file with exactly those bytes (and then replaces it whatever `onConflict` says); `If-None-Match: *` only where nothing is; else 412 ' +
      'PRECONDITION_FAILED (`details.currentSha256`, null when no file is there) and nothing is stored. Both are decided again in the commit\'s atomic step: ' +
      'of concurrent uploads with the same If-Match exactly one succeeds. A file at a new path counts toward MAX_FILES (default 1,000,000: the ' +
      'files and folders of the workspace and the paths in the trash) with the folders it creates: 403 QUOTA_EXCEEDED (`details.quota` MAX_FILES) ' +
      'when they would pass it, decided before a byte is sent and again at the commit.',
    tag: 'Files',
    slot: 'uploads',
    query: UploadQuery,
    requestHeaders: [FILE_IF_MATCH, UPLOAD_IF_NONE_MATCH],
    rawBody: { contentType: 'multipart/form-data', schema: UploadForm, description: 'path?, onConflict?, then file; the file at most MAX_UPLOAD_BYTES (default 5 GiB, inclusive; more → 413, nothing stored)' },
    example: { body: ex.uploadForm, response: ex.uploadResult },
    responses: { 200: { description: 'Stored', schema: UploadResult } },
    errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'QUOTA_EXCEEDED', 'FILE_EXISTS', 'PATH_CONFLICT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'PRECONDITION_FAILED', 'UNAVAILABLE'],
    handler: async ({ query, call, req }, res) => {
      if (!req.is('multipart/form-data')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'an upload must be multipart/form-data');
      const conditions = { ifMatch: parseFileIfMatch(req.get('if-match')), ifNoneMatch: parseIfNoneMatchStar(req.get('if-none-match')) };
      const stored = await readUploadForm(req, res, {
        fromQuery: { path: query.path, onConflict: query.onConflict },
        idleTimeoutMs: deps.uploadIdleTimeoutMs,
        onFile: storeFile(deps, call, req, conditions),
      });
      res.json({ success: true, path: stored.path, size: stored.size, mimeType: stored.mimeType, sha256: stored.sha256 });
    },
  });
}

/**
 * The upload session takes the file (names, destination, quota, parts, hash); it is committed
 * only after the form's closing delimiter. Any failure on the way aborts it and stores nothing.
 */
function storeFile(deps: UploadRouteDeps, call: Call, req: Request, conditions: { ifMatch: string | undefined; ifNoneMatch: true | undefined }): FileHandler<UploadFileResponse> {
  return async (fields, file, formDone) => {
    // The file is smaller than the whole body, which Content-Length (when sent) gives.
    const sizeAtMost = Number(req.headers['content-length'] ?? NaN);
    const session = await UploadSession.begin(deps, call, { path: fields.path, filename: file.filename, onConflict: fields.onConflict, ...conditions }, { sizeAtMost });
    try {
      const sent = await session.send(file.stream, sizeAtMost);
      // The file part ended, but only the closing delimiter makes the body whole.
      await formDone;
      return await session.commit(sent);
    } catch (err) {
      session.abort();
      throw err;
    }
  };
}
