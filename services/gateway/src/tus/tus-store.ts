import { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable } from 'node:stream';
import { DataStore, ERRORS, Upload } from '@tus/utils';
import { createSHA256 } from 'hash-wasm';
import { AppError, errors, type Logger } from '@workspace/platform';
import type { ObjectStore } from '../http/object-store.js';
import { conflictMode } from '../routes/files.json.js';
import type { FilesClient } from '../routes/files.routes.js';
import type { TusStateRepo, TusState } from './tus-state.redis.js';

/** Who is asking: set around every tus request by the route (tus's hooks do not carry it). */
export interface TusCall {
  userId: string;
  requestId: string;
}
export const tusCall = new AsyncLocalStorage<TusCall>();

/** CommitUpload completes the multipart upload: seconds for thousands of parts. */
const COMMIT_DEADLINE_MS = 120_000;

export interface TusStoreOptions {
  files: FilesClient;
  store: ObjectStore;
  repo: TusStateRepo;
  logger: Logger;
  /** How long an unfinished upload lives (Upload-Expires); 24 h by default (CONTRACT §15). */
  expiryMs: number;
}

function current(): TusCall {
  const call = tusCall.getStore();
  if (!call) throw errors.internal(new Error('a tus request outside its call context'));
  return call;
}

/**
 * A tus DataStore on the data path of every upload (CONTRACT §5): the files service decides
 * (BeginUpload refuses a conflict early, CommitUpload decides), the bytes go straight to the
 * store by the presigned part URLs it hands out, and nothing but a part's worth of the newest
 * bytes (the tail, in Redis) is held between requests. SHA-256 is carried across requests and
 * replicas as hash-wasm's saved state after the last whole part. The file is committed when its
 * last byte arrives; only then does the offset reach the length.
 */
export class TusStore extends DataStore {
  constructor(private readonly o: TusStoreOptions) {
    super();
    this.extensions = ['creation', 'creation-with-upload', 'expiration', 'termination'];
  }

  override getExpiration(): number {
    return this.o.expiryMs;
  }

  override async create(upload: Upload): Promise<Upload> {
    const call = current();
    const meta = upload.metadata ?? {};
    const onConflict = conflictMode(meta.onConflict ?? 'error');
    if (onConflict === undefined) throw errors.invalidArgument('onConflict must be error, overwrite or uuid', 'Upload-Metadata.onConflict');
    if (upload.size === undefined) throw errors.invalidArgument('Upload-Length is required (deferred lengths are not supported)', 'Upload-Length');
    // Kept pending as long as the tus upload lives (Upload-Expires), not UPLOAD_PENDING_MS.
    const begun = await this.o.files.beginUpload({ ...(meta.path != null && { path: meta.path }), filename: meta.filename ?? '', onConflict, idleMs: this.o.expiryMs }, call);
    if (upload.size > begun.maxBytes) {
      await this.abort(begun.uploadId, call);
      throw new AppError('PAYLOAD_TOO_LARGE', `the upload is larger than the limit of ${begun.maxBytes} bytes`);
    }
    // Upload-Length is known: its bytes reserve room in FILE_QUOTA_BYTES before any is sent
    // (403 QUOTA_EXCEEDED at creation); the commit settles it, an abort or expiry gives it back.
    try {
      await this.o.files.reserveUpload({ uploadId: begun.uploadId, totalBytes: upload.size }, call);
    } catch (err) {
      await this.abort(begun.uploadId, call);
      throw err;
    }
    const hasher = await createSHA256();
    hasher.init();
    const creationDate = new Date().toISOString();
    const state: TusState = {
      userId: call.userId,
      uploadId: begun.uploadId,
      size: upload.size,
      metadata: meta,
      creationDate,
      putUrl: begun.putUrl,
      partSize: Number(begun.partSize),
      parts: [],
      hash: Buffer.from(hasher.save()).toString('base64'),
    };
    await this.o.repo.put(upload.id, { state, tail: Buffer.alloc(0) }, this.expiresAt(state));
    return new Upload({ id: upload.id, size: upload.size, offset: 0, metadata: meta, creation_date: creationDate });
  }

  override async getUpload(id: string): Promise<Upload> {
    const { state, tail } = await this.load(id);
    return new Upload({ id, size: state.size, offset: this.offsetOf(state, tail), metadata: state.metadata, creation_date: state.creationDate });
  }

  override async remove(id: string): Promise<void> {
    const { state } = await this.load(id);
    await this.o.repo.delete(id);
    if (!state.committedPath) await this.abort(state.uploadId, current());
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const call = current();
    const record = await this.load(id);
    const { state } = record;
    if (state.committedPath) return state.size;
    // tus checked the offset under its lock; a mismatch here is a record changed meanwhile.
    if (offset !== this.offsetOf(state, record.tail)) throw ERRORS.INVALID_OFFSET;
    const pending: Buffer[] = record.tail.byteLength ? [record.tail] : [];
    let pendingBytes = record.tail.byteLength;
    let sealed = this.sealedBytes(state);
    // Set while a part goes to the store: a failure then is the store's, not a client cut off.
    let storing = false;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        pending.push(chunk);
        pendingBytes += chunk.byteLength;
        if (sealed + pendingBytes > state.size) throw errors.invalidArgument('more bytes than Upload-Length', 'Upload-Length');
        // A whole part that is not the last one goes to the store now.
        while (pendingBytes >= state.partSize && sealed + state.partSize < state.size) {
          const all = Buffer.concat(pending);
          storing = true;
          await this.sealPart(id, state, all.subarray(0, state.partSize), call);
          storing = false;
          sealed += state.partSize;
          pending.length = 0;
          pending.push(all.subarray(state.partSize));
          pendingBytes = all.byteLength - state.partSize;
        }
      }
    } catch (err) {
      // Cut off: what came after the last whole part is dropped; the client resumes from HEAD's offset.
      if (err instanceof AppError) throw err;
      if (storing) throw errors.unavailable('the object store', err);
      return sealed + (sealed === this.sealedBytes(record.state) ? record.tail.byteLength : 0);
    }
    const tail = Buffer.concat(pending);
    if (sealed + tail.byteLength < state.size) {
      await this.o.repo.put(id, { state, tail }, this.expiresAt(state));
      return sealed + tail.byteLength;
    }
    await this.finish(id, state, tail, call);
    return state.size;
  }

  /** The last bytes: the last part (or the single PUT), then CommitUpload under §5's rules. */
  private async finish(id: string, state: TusState, tail: Buffer, call: TusCall): Promise<void> {
    const hasher = await this.hasher(state);
    hasher.update(tail);
    try {
      // The single PUT's URL was made at creation and may have expired since (an upload resumed
      // hours later): a body that arrives later goes as one part, under a URL asked for now.
      if (state.parts.length === 0 && tail.byteLength === 0) await this.o.store.put(state.putUrl, tail, AbortSignal.timeout(COMMIT_DEADLINE_MS));
      else await this.putPart(state, tail, call);
      const committed = await this.o.files.commitUpload(
        { uploadId: state.uploadId, size: state.size, sha256: hasher.digest('hex'), parts: state.parts },
        { ...call, deadlineMs: COMMIT_DEADLINE_MS },
      );
      await this.o.repo.put(id, { state: { ...state, committedPath: committed.path }, tail: Buffer.alloc(0) }, this.expiresAt(state));
    } catch (err) {
      // A conflict found at commit (or any failure there): nothing is stored and the upload ends.
      await this.o.repo.delete(id);
      await this.abort(state.uploadId, call);
      throw err;
    }
  }

  private async sealPart(id: string, state: TusState, part: Buffer, call: TusCall): Promise<void> {
    const hasher = await this.hasher(state);
    await this.putPart(state, part, call);
    hasher.update(part);
    state.hash = Buffer.from(hasher.save()).toString('base64');
    await this.o.repo.put(id, { state, tail: Buffer.alloc(0) }, this.expiresAt(state));
  }

  private async putPart(state: TusState, body: Buffer, call: TusCall): Promise<void> {
    const partNumber = state.parts.length + 1;
    const [url] = (await this.o.files.uploadParts({ uploadId: state.uploadId, firstPartNumber: partNumber, count: 1 }, call)).urls;
    if (!url) throw errors.internal(new Error('UploadParts answered no URL'));
    const etag = await this.o.store.put(url, body, AbortSignal.timeout(COMMIT_DEADLINE_MS));
    state.parts.push({ partNumber, etag });
  }

  private async hasher(state: TusState) {
    const hasher = await createSHA256();
    hasher.load(Buffer.from(state.hash, 'base64'));
    return hasher;
  }

  private sealedBytes(state: TusState): number {
    return state.parts.length * state.partSize;
  }

  private offsetOf(state: TusState, tail: Buffer): number {
    return state.committedPath ? state.size : this.sealedBytes(state) + tail.byteLength;
  }

  private expiresAt(state: TusState): number {
    return Date.parse(state.creationDate) + this.o.expiryMs;
  }

  /** The record of an upload of the caller's (another user's is as absent as a missing one). */
  private async load(id: string) {
    const record = await this.o.repo.get(id);
    if (!record || record.state.userId !== current().userId) throw ERRORS.FILE_NOT_FOUND;
    return record;
  }

  private async abort(uploadId: string, call: TusCall): Promise<void> {
    await this.o.files.abortUpload({ uploadId }, { ...call, deadlineMs: 10_000 }).catch((err: unknown) => {
      this.o.logger.warn({ err, requestId: call.requestId, uploadId }, 'could not abort a tus upload; the sweeper will remove it');
    });
  }
}
