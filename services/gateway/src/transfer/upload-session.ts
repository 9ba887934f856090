import type { Readable } from 'node:stream';
import { errors, type Logger, type OutgoingContext } from '@workspace/platform';
import type { CompletedPart, UploadFileResponse } from '@workspace/proto/workspace/files/v1/files';
import type { ObjectStore } from './object-store.js';
import { sendBody, type PartSink, type SentBody, type UploadTarget } from './upload-transfer.js';
import { conflictMode, type FilesClient } from '../clients.js';

/** CommitUpload completes the store's multipart upload, which takes seconds for thousands of parts. */
export const COMMIT_DEADLINE_MS = 120_000;
/** AbortUpload is best effort: the pending record lets the sweeper remove what it leaves. */
export const ABORT_DEADLINE_MS = 10_000;
/** A part or a tail object going to the store, when no client signal bounds it. */
export const STORE_DEADLINE_MS = 120_000;

const EMPTY = Buffer.alloc(0);

/** What an upload session needs: the files service decides, the store takes the bytes. */
export interface UploadDeps {
  files: FilesClient;
  store: ObjectStore;
  logger: Logger;
}

/** Who is uploading: forwarded to every call; `signal` cancels the transfer when the client leaves. */
export type UploadCall = OutgoingContext & { userId: string; requestId: string };

/** Where the bytes go, as the client named it (multipart form fields, tus metadata). */
export interface Destination {
  /** Unset: `/files/<filename>`; ending in `/` or naming a directory: `<path>/<filename>`. */
  path?: string | null | undefined;
  /** The client's file name; '' when none was given. */
  filename: string;
  /** `error` (default), `overwrite` or `uuid`. */
  onConflict?: string | null | undefined;
  /** The name of the field `onConflict` came in, for the error's `details.field`. */
  onConflictField?: string;
  /** `If-Match`: commit only onto a file with exactly these bytes (64 lowercase hex SHA-256). */
  ifMatch?: string | undefined;
  /** `If-None-Match: *`: commit only where nothing is. */
  ifNoneMatch?: boolean | undefined;
}

export interface BeginOptions {
  /**
   * The whole size, when the client declared it before sending (tus `Upload-Length`): over
   * the limit → 413 at once, and its bytes are reserved against the quota before any is sent.
   */
  declaredSize?: number;
  /** How long the upload may wait between requests (a resumable upload); 0: the service's default. */
  idleMs?: number;
  /**
   * An upper bound of the size (a multipart request's Content-Length): reserved with the begin
   * when it fits, which spares a reservation per part; else the bytes reserve as they go.
   */
  sizeAtMost?: number;
}

/**
 * The protocols decode names before we see them, with U+FFFD in place of bytes that are not
 * UTF-8 (busboy, tus's base64 metadata): a name holding U+FFFD is refused, so that such bytes
 * never name another file. The path rules themselves are the files service's.
 */
const REPLACEMENT = '\uFFFD';

export function checkNames(dest: Destination): void {
  const notUtf8 = (what: string) => errors.invalidPath(`${what} is not valid UTF-8 (U+FFFD, which stands for bytes that are not, is refused too)`);
  if (dest.path?.includes(REPLACEMENT)) throw notUtf8('path');
  if (dest.filename.includes(REPLACEMENT)) throw notUtf8('the file name');
}

/**
 * One upload, whatever protocol carries its bytes (multipart, tus, an import, the MCP tools):
 * the names checked, the destination decided and the upload recorded as pending by the files
 * service (BeginUpload), the size limit and the quota reservation before bytes are sent, the
 * parts to the store by presigned URL, SHA-256, the commit, and on any refusal or failure the
 * abort that leaves nothing (no pending upload, reservation or object). A protocol adapter maps
 * its framing onto these steps and nothing else.
 */
export class UploadSession {
  /** The bytes the quota holds for this upload so far (a running total). */
  private reserved = 0;

  private constructor(
    private readonly deps: UploadDeps,
    private readonly call: UploadCall,
    readonly uploadId: string,
    /** The single-PUT URL, the part size, the largest size accepted and the summary bound, from BeginUpload. */
    readonly target: UploadTarget,
  ) {}

  /**
   * Checks the names and starts the upload. With a declared size, refuses it over the limit and
   * reserves it against the quota now; on any refusal the pending upload is gone again.
   */
  static async begin(deps: UploadDeps, call: UploadCall, dest: Destination, options: BeginOptions = {}): Promise<UploadSession> {
    checkNames(dest);
    const onConflict = conflictMode(dest.onConflict ?? 'error');
    if (onConflict === undefined) throw errors.invalidArgument('onConflict must be error, overwrite or uuid', dest.onConflictField ?? 'onConflict');
    // A declared size is reserved with the begin when it fits; when it does not, `reserve` below asks again and is refused.
    const bound = options.declaredSize ?? options.sizeAtMost;
    const hint = bound !== undefined && Number.isSafeInteger(bound) && bound > 0 ? bound : 0;
    const begun = await deps.files.beginUpload({ ...(dest.path != null && { path: dest.path }), filename: dest.filename, onConflict, idleMs: options.idleMs ?? 0, reserveHint: hint, ...(dest.ifMatch !== undefined && { ifMatchSha256: dest.ifMatch }), ifNoneMatch: dest.ifNoneMatch === true }, call);
    const session = new UploadSession(deps, call, begun.uploadId, { putUrl: begun.putUrl, partSize: Number(begun.partSize), maxBytes: Number(begun.maxBytes), summaryMaxBytes: Number(begun.summaryMaxBytes) });
    session.reserved = Number(begun.reservedBytes) || 0;
    if (options.declaredSize !== undefined) {
      try {
        if (options.declaredSize > session.target.maxBytes) throw errors.payloadTooLarge(session.target.maxBytes);
        await session.reserve(options.declaredSize);
      } catch (err) {
        await session.abortNow();
        throw err;
      }
    }
    return session;
  }

  /** A session begun by an earlier request (a resumable upload), for `call`'s user. */
  static resume(deps: UploadDeps, call: UploadCall, uploadId: string, target: UploadSession['target']): UploadSession {
    return new UploadSession(deps, call, uploadId, target);
  }

  /** Reserves quota for `totalBytes` (a running total of what will have been sent); a no-op within what is held. */
  async reserve(totalBytes: number): Promise<void> {
    if (totalBytes <= this.reserved) return;
    await this.deps.files.reserveUpload({ uploadId: this.uploadId, totalBytes }, this.call);
    this.reserved = Math.max(this.reserved, totalBytes);
  }

  /**
   * Streams a whole body to the store (one PUT, or parts while it flows), reserving quota as
   * it goes, hashing and counting it; over the limit → 413. The caller commits or aborts.
   */
  send(source: Readable, sizeAtMost?: number): Promise<SentBody> {
    return sendBody(source, { target: this.target, sink: this.sink(), signal: this.call.signal, sizeAtMost });
  }

  /** PUTs part `partNumber` and resolves with it as the commit lists it. */
  async putPart(partNumber: number, body: Buffer, signal?: AbortSignal): Promise<CompletedPart> {
    const [url] = (await this.deps.files.uploadParts({ uploadId: this.uploadId, firstPartNumber: partNumber, count: 1 }, this.call)).urls;
    if (!url) throw errors.internal(new Error('UploadParts answered no URL'));
    return { partNumber, etag: await this.deps.store.put(url, body, signal ?? AbortSignal.timeout(STORE_DEADLINE_MS)) };
  }

  /** PUTs the whole file as one object (a body known to fit in one part). */
  async putWhole(body: Buffer): Promise<void> {
    await this.deps.store.put(this.target.putUrl, body, this.call.signal ?? AbortSignal.timeout(STORE_DEADLINE_MS));
  }

  /** URLs of the two objects that hold a resumable upload's unfinished part between requests. */
  async tailUrls(): Promise<{ put: string[]; get: string[] }> {
    const { putUrls, getUrls } = await this.deps.files.uploadTail({ uploadId: this.uploadId }, this.call);
    return { put: putUrls, get: getUrls };
  }

  /**
   * Makes the bytes the file. Without the client's signal: once the whole body is in, its
   * sender leaving does not undo it. A refusal (a conflict found now, the quota) ends the upload.
   */
  async commit(sent: SentBody): Promise<UploadFileResponse> {
    const { userId, requestId } = this.call;
    return this.deps.files.commitUpload({ uploadId: this.uploadId, ...sent, summary: sent.summary ?? EMPTY }, { userId, requestId, deadlineMs: COMMIT_DEADLINE_MS });
  }

  /** Ends the upload, leaving nothing; fire and forget (the answer does not wait, a failure is logged). */
  abort(): void {
    void this.abortNow();
  }

  /** As `abort`, awaited. Never rejects: the pending record lets the sweeper finish the job. */
  async abortNow(): Promise<void> {
    const { userId, requestId } = this.call;
    await this.deps.files.abortUpload({ uploadId: this.uploadId }, { userId, requestId, deadlineMs: ABORT_DEADLINE_MS }).catch((err: unknown) => {
      this.deps.logger.warn({ err, requestId, uploadId: this.uploadId }, 'could not abort an upload; the sweeper will remove it');
    });
  }

  private sink(): PartSink {
    return {
      reserve: (totalBytes) => this.reserve(totalBytes),
      partUrls: async (first, count) => (await this.deps.files.uploadParts({ uploadId: this.uploadId, firstPartNumber: first, count }, this.call)).urls,
      put: (url, body, signal) => this.deps.store.put(url, body, signal),
    };
  }
}
