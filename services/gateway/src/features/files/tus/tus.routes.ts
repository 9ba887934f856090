import { Server, type ServerOptions } from '@tus/server';
import type { RequestHandler, Response } from 'express';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import { z } from 'zod';
import { AppError, errors, type Logger, type RedisClient } from '@workspace/platform';
import type { ObjectStore } from '../../../transfer/object-store.js';

import { TUS_RESUMABLE, UPLOAD_LENGTH, UPLOAD_METADATA, UPLOAD_OFFSET } from '../../../api/request-headers.js';
import { defineRoute, type Method, type RouteDef, type RouteInput } from '../../../api/route.js';
import { RedisLocker } from './redis-locker.js';
import { TusStateRepo } from './tus-state.redis.js';
import { TusStore, tusCall } from './tus-store.js';
import type { FilesClient } from '../../../clients.js';

export const TUS_PATH = '/v1/agent/files/uploads';

export interface TusOptions {
  files: FilesClient;
  store: ObjectStore;
  redis: RedisClient;
  logger: Logger;
  /** TUS_UPLOAD_EXPIRY_MS: how long an unfinished upload lives (default 24 h). */
  expiryMs: number;
  /** UPLOAD_IDLE_TIMEOUT_MS: a PATCH that sends nothing for this long ends like a cut-off one. */
  idleTimeoutMs: number;
  /** MAX_UPLOAD_BYTES, announced as Tus-Max-Size (the files service enforces it). */
  maxBytes: number;
  /** PUBLIC_URL, for the Location of new uploads; unset: the request's scheme and host. */
  publicUrl?: string | undefined;
}

/** tus's own refusals (plain-text bodies) in the contract's envelope, by status. */
function fromTus(status: number, body: string): AppError {
  const message = body.trim() || 'the tus request was refused';
  if (status === 404 || status === 410) return errors.notFound('file', 'no such upload (finished, expired or terminated)');
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', message);
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', message);
  if (status === 409) return new AppError('UPLOAD_OFFSET_MISMATCH', 'Upload-Offset is not the offset of the upload; ask HEAD for it');
  if (status === 412) return new AppError('PRECONDITION_FAILED', 'Tus-Resumable: 1.0.0 is required (or the version is not supported)');
  if (status >= 500) return errors.unavailable('the upload store', new Error(message));
  return errors.invalidArgument(message);
}

/**
 * tus core's discovery: `OPTIONS` on the upload endpoint answers 204 with what the server
 * supports, with no token (a protocol handshake, outside the API's operations). A browser's
 * CORS preflight from an allowed origin is answered before it, by the CORS middleware.
 */
export function tusDiscovery(maxBytes: number): RequestHandler {
  return (_req, res) => {
    res.status(204).set({ 'Tus-Resumable': '1.0.0', 'Tus-Version': '1.0.0', 'Tus-Extension': TusStore.EXTENSIONS.join(','), 'Tus-Max-Size': String(maxBytes) }).end();
  };
}

/**
 * tus 1.0 (core, creation, creation-with-upload, expiration, termination) served by
 * @tus/server behind the gateway's own routes, so authentication, rate limits, upload slots,
 * CORS and the error envelope are those of every route. The bytes take the upload session
 * (TusStore). An upload is its owner's alone: another user's id is 404 before any lock is
 * taken or byte read, so it cannot disturb the owner's requests.
 */
export function tusRoutes(o: TusOptions): RouteDef[] {
  const repo = new TusStateRepo(o.redis);
  const options: ServerOptions & { datastore: TusStore } = {
    path: TUS_PATH,
    datastore: new TusStore({ files: o.files, store: o.store, repo, logger: o.logger, expiryMs: o.expiryMs, idleTimeoutMs: o.idleTimeoutMs }),
    locker: new RedisLocker({ redis: o.redis }),
    maxSize: o.maxBytes,
    disableTerminationForFinishedUploads: true,
    generateUrl: (_req, { proto, host, path, id }) => `${(o.publicUrl ?? `${proto}://${host}`).replace(/\/+$/, '')}${path}/${id}`,
    // Ours (AppError) are rendered by the gateway; see `serve`.
    onResponseError: (_req, err) => {
      if (err instanceof AppError) throw err;
      return undefined;
    },
  };
  const server = new Server(options);

  const serve = async ({ call, req, params }: RouteInput<unknown, unknown, unknown>, res: Response) => {
    const { id } = params as { id?: string };
    res.setHeader('Tus-Resumable', '1.0.0');
    const state = id === undefined ? undefined : await repo.get(id);
    if (id !== undefined && (!state || state.userId !== call.userId)) throw errors.notFound('file', 'no such upload (finished, expired or terminated)');
    const failure: { error?: AppError } = {};
    const response = await tusCall.run({ ...call, cut: () => req.destroy() }, async () => {
      try {
        return await server.handleWeb(new NodeRequest({ req, res }));
      } catch (err) {
        if (err instanceof AppError) failure.error = err;
        throw err;
      }
    });
    if (response.status >= 400) {
      if (failure.error) throw failure.error;
      throw fromTus(response.status, await response.text());
    }
    // CORS is the gateway's (allowed origins only, on every route): tus's own headers go.
    for (const name of [...response.headers.keys()]) if (name.startsWith('access-control-')) response.headers.delete(name);
    // What tus-js-client and Uppy read beyond tus core: the offset of a creation (0 unless bytes came
    // with it), and when an upload expires on a HEAD as on a POST and a PATCH.
    if (req.method === 'POST' && response.status === 201 && !response.headers.has('upload-offset')) response.headers.set('Upload-Offset', '0');
    if (req.method === 'HEAD' && state) response.headers.set('Upload-Expires', new Date(options.datastore.expiresAt(state)).toUTCString());
    await sendNodeResponse(res, response);
  };

  const Id = z.object({ id: z.string().regex(/^[0-9a-f]{32}$/).describe('The upload id, from the Location of the POST') }).strict();
  const route = (method: Method, path: string, doc: Pick<RouteDef, 'operationId' | 'summary' | 'description' | 'responses' | 'errors' | 'requestHeaders'> & { example: { params?: z.input<typeof Id> } }, withId: boolean) =>
    defineRoute({ method, path, tag: 'Files', ...doc, ...(withId && { params: Id }), ...((method === 'post' || method === 'patch') && { slot: 'uploads' as const }), handler: serve });
  const common = ['UNAUTHENTICATED', 'INVALID_ARGUMENT', 'UNAVAILABLE', 'PRECONDITION_FAILED'] as const;
  const UPLOAD_ID = { id: '24e533e02ec3bc40c387f1a0e460e216' };
  return [
    route('post', TUS_PATH, {
      operationId: 'createResumableUpload',
      summary: 'Start a resumable upload (tus 1.0 creation, creation-with-upload)',
      description:
        'tus 1.0 (`Tus-Resumable: 1.0.0`, `Upload-Length`, `Upload-Metadata` with base64 `filename`, `path`, `onConflict` as for `files/upload`, and the ' +
        'preconditions `ifMatch` (the file\'s ETag, `"<sha256>"` or the bare hex) and `ifNoneMatch` (`*`) as If-Match and If-None-Match do for ' +
        '`files/upload`: checked now, and again when the last byte commits (412 PRECONDITION_FAILED then, nothing stored)). 201 with ' +
        '`Location` and `Upload-Expires` (24 h, TUS_UPLOAD_EXPIRY_MS). Names follow the path rules exactly as in `files/upload` (bytes that are not UTF-8 → 400 ' +
        'INVALID_PATH). `Upload-Length` is checked against MAX_UPLOAD_BYTES (413) and reserved against FILE_QUOTA_BYTES (403) now; a file at a new path must fit MAX_FILES (403, `details.quota` MAX_FILES), now and at the commit; `Upload-Length: 0` stores the ' +
        'empty file at once. A conflict known now is 409 FILE_EXISTS at once; one found when the last byte arrives is 409 then, and nothing is stored. Any tus ' +
        'client (tus-js-client, Uppy) works unchanged.',
      responses: { 201: { description: 'Created', headers: { Location: 'The upload URL', 'Upload-Offset': 'Bytes stored', 'Upload-Expires': 'HTTP date' } } },
      requestHeaders: [TUS_RESUMABLE, UPLOAD_LENGTH, UPLOAD_METADATA],
      example: {},
      errors: [...common, 'INVALID_PATH', 'FILE_EXISTS', 'PATH_CONFLICT', 'PAYLOAD_TOO_LARGE', 'QUOTA_EXCEEDED', 'RATE_LIMITED'],
    }, false),
    route('head', `${TUS_PATH}/{id}`, {
      operationId: 'getResumableUpload',
      summary: 'The offset of a resumable upload (tus HEAD)',
      description: '`Upload-Offset`, `Upload-Length`, `Upload-Expires`. An upload whose last byte arrived is committed: its offset equals its length.',
      responses: { 200: { description: 'The upload', headers: { 'Upload-Offset': 'Bytes stored', 'Upload-Length': 'The length', 'Upload-Expires': 'HTTP date' } } },
      requestHeaders: [TUS_RESUMABLE],
      example: { params: UPLOAD_ID },
      errors: [...common, 'FILE_NOT_FOUND'],
    }, true),
    route('patch', `${TUS_PATH}/{id}`, {
      operationId: 'appendResumableUpload',
      summary: 'Send bytes of a resumable upload (tus, application/offset+octet-stream)',
      description:
        '`Upload-Offset` must equal the offset stored (else 409). The last byte commits the file under the rules of `files/upload`: a conflict then → 409, nothing ' +
        'stored. A PATCH cut off, or one that sends nothing for UPLOAD_IDLE_TIMEOUT_MS (its connection is closed), keeps the bytes up to its last whole part; ' +
        'ask HEAD for the offset and resume. Only the upload\'s owner reaches it: another user\'s id is 404.',
      responses: { 204: { description: 'Stored', headers: { 'Upload-Offset': 'The new offset' } } },
      requestHeaders: [TUS_RESUMABLE, UPLOAD_OFFSET],
      example: { params: UPLOAD_ID },
      errors: [...common, 'FILE_NOT_FOUND', 'FILE_EXISTS', 'PATH_CONFLICT', 'UPLOAD_OFFSET_MISMATCH', 'PAYLOAD_TOO_LARGE', 'QUOTA_EXCEEDED', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED'],
    }, true),
    route('delete', `${TUS_PATH}/{id}`, {
      operationId: 'terminateResumableUpload',
      summary: 'Terminate an unfinished resumable upload (tus termination)',
      description: 'Its bytes are dropped; nothing is stored.',
      responses: { 204: { description: 'Terminated' } },
      requestHeaders: [TUS_RESUMABLE],
      example: { params: UPLOAD_ID },
      errors: [...common, 'FILE_NOT_FOUND'],
    }, true),
  ];
}
