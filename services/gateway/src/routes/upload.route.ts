import { AppError, errors } from '@workspace/platform';
import type { UploadFileResponse } from '@workspace/proto/workspace/files/v1/files';
import { readUploadForm, type FileHandler } from '../http/upload-form.js';
import { sendBody, type PartSink } from '../http/upload-transfer.js';
import { UploadForm, UploadQuery, UploadResult } from '../schemas/files.schemas.js';
import { conflictMode } from './files.json.js';
import type { FilesRouteDeps } from './files.routes.js';
import { defineRoute, type RouteDef, type RouteInput } from './route.js';
import * as ex from './examples/files.examples.js';

/** CommitUpload completes the store's multipart upload, which takes seconds for thousands of parts. */
const COMMIT_DEADLINE_MS = 120_000;
/** AbortUpload is best effort: the pending record lets the sweeper remove what it leaves. */
const ABORT_DEADLINE_MS = 10_000;

type Call = RouteInput<unknown, unknown, unknown>['call'];

export function uploadRoute(deps: FilesRouteDeps): RouteDef {
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
      'pass it are refused (403 QUOTA_EXCEEDED) before their bytes are stored, and a failed upload gives its reservation back.',
    tag: 'Files',
    uploadSlot: true,
    query: UploadQuery,
    rawBody: { contentType: 'multipart/form-data', schema: UploadForm, description: 'path?, onConflict?, then file; the file at most MAX_UPLOAD_BYTES (default 5 GiB, inclusive; more → 413, nothing stored)' },
    example: { body: ex.uploadForm, response: ex.uploadResult },
    responses: { 200: { description: 'Stored', schema: UploadResult } },
    errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'QUOTA_EXCEEDED', 'FILE_EXISTS', 'PATH_CONFLICT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNAVAILABLE'],
    handler: async ({ query, call, req }, res) => {
      if (!req.is('multipart/form-data')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'an upload must be multipart/form-data');
      const stored = await readUploadForm(req, res, {
        fromQuery: { path: query.path, onConflict: query.onConflict },
        idleTimeoutMs: deps.uploadIdleTimeoutMs,
        onFile: storeFile(deps, call),
      });
      res.json({ success: true, path: stored.path, size: stored.size, mimeType: stored.mimeType, sha256: stored.sha256 });
    },
  });
}

/**
 * BeginUpload (which refuses early what conflicts now), the bytes straight to the store, then
 * CommitUpload — only after the form's closing delimiter. Any failure on the way aborts the
 * pending upload and commits nothing.
 */
function storeFile(deps: FilesRouteDeps, call: Call): FileHandler<UploadFileResponse> {
  return async (fields, file, formDone) => {
    const onConflict = conflictMode(fields.onConflict ?? 'error');
    if (onConflict === undefined) throw errors.invalidArgument('onConflict must be error, overwrite or uuid', 'onConflict');
    const begun = await deps.files.beginUpload({ ...(fields.path !== undefined && { path: fields.path }), filename: file.filename, onConflict, idleMs: 0 }, call);
    try {
      const sink: PartSink = {
        reserve: async (totalBytes) => void (await deps.files.reserveUpload({ uploadId: begun.uploadId, totalBytes }, call)),
        partUrls: async (first, count) => (await deps.files.uploadParts({ uploadId: begun.uploadId, firstPartNumber: first, count }, call)).urls,
        put: (url, body, signal) => deps.store.put(url, body, signal),
      };
      const sent = await sendBody(file.stream, { target: begun, sink, signal: call.signal });
      // The file part ended, but only the closing delimiter makes the body whole (CONTRACT §5).
      await formDone;
      // Without the client's signal: once the whole body is in, its sender leaving does not undo it.
      return await deps.files.commitUpload({ uploadId: begun.uploadId, ...sent }, { userId: call.userId, requestId: call.requestId, deadlineMs: COMMIT_DEADLINE_MS });
    } catch (err) {
      abortUpload(deps, call, begun.uploadId);
      throw err;
    }
  };
}

/** Fire and forget: the error answer does not wait for it, and a failure is only logged. */
function abortUpload(deps: FilesRouteDeps, call: Call, uploadId: string): void {
  deps.files.abortUpload({ uploadId }, { userId: call.userId, requestId: call.requestId, deadlineMs: ABORT_DEADLINE_MS }).catch((err: unknown) => {
    deps.logger.warn({ err, requestId: call.requestId, uploadId }, 'could not abort an upload; the sweeper will remove it');
  });
}
