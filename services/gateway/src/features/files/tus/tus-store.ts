import { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable } from 'node:stream';
import { DataStore, ERRORS, Upload } from '@tus/utils';
import { createSHA256 } from 'hash-wasm';
import { AppError, errors } from '@workspace/platform';
import { parseFileIfMatch } from '../../../api/if-match.js';
import { IdleTimer } from '../../../transfer/idle-timer.js';
import { PartBuffer } from '../../../transfer/part-buffer.js';
import { STORE_DEADLINE_MS, UploadSession, type UploadCall, type UploadDeps } from '../../../transfer/upload-session.js';
import type { TusStateRepo, TusState } from './tus-state.redis.js';

/** Who is asking: set around every tus request by the route (tus's hooks do not carry it). */
export interface TusCall extends UploadCall {
  /** Ends the request's connection (a PATCH that stalled). */
  cut(): void;
}
export const tusCall = new AsyncLocalStorage<TusCall>();

export interface TusStoreOptions extends UploadDeps {
  repo: TusStateRepo;
  /** How long an unfinished upload lives (Upload-Expires); 24 h by default. */
  expiryMs: number;
  /** A PATCH that sends no byte for this long ends like a cut-off one (UPLOAD_IDLE_TIMEOUT_MS). */
  idleTimeoutMs: number;
}

/**
 * The upload's precondition from its metadata (docs/api/files.md#preconditions): `ifMatch` the
 * file's ETag (`"<sha256>"`, or the bare 64 hex), `ifNoneMatch` `*` (or with no value). Malformed
 * → 400 INVALID_ARGUMENT naming the metadata key.
 */
export function tusConditions(meta: Record<string, string | null | undefined>): { ifMatch?: string; ifNoneMatch?: true } {
  const out: { ifMatch?: string; ifNoneMatch?: true } = {};
  if ('ifMatch' in meta) {
    const value = (meta.ifMatch ?? '').trim();
    try {
      out.ifMatch = parseFileIfMatch(value.startsWith('"') ? value : `"${value}"`);
    } catch {
      throw errors.invalidArgument('Upload-Metadata ifMatch must be the file\'s ETag: a SHA-256 of 64 hex digits ("<sha256>")', 'Upload-Metadata.ifMatch');
    }
  }
  if ('ifNoneMatch' in meta) {
    const value = (meta.ifNoneMatch ?? '*').trim();
    if (value !== '*') throw errors.invalidArgument('Upload-Metadata ifNoneMatch must be * (store only where nothing is)', 'Upload-Metadata.ifNoneMatch');
    out.ifNoneMatch = true;
  }
  return out;
}

function current(): TusCall {
  const call = tusCall.getStore();
  if (!call) throw errors.internal(new Error('a tus request outside its call context'));
  return call;
}

/** The end of a PATCH whose client went away or stalled: not an error of the upload. */
class CutOff extends Error {}

/**
 * A tus DataStore over the upload session: the session decides and refuses (names, limit,
 * quota reserved for Upload-Length at creation, conflicts), whole parts go to the store by
 * presigned URL as they fill, and the bytes after the last whole part wait between requests in
 * a tail object in the store (never in Redis, which holds only small state). SHA-256 is carried
 * across requests and replicas as hash-wasm's saved state after the last whole part. The file
 * is committed when its last byte arrives (at creation for an empty one); only then does the
 * offset reach the length.
 */
export class TusStore extends DataStore {
  static readonly EXTENSIONS = ['creation', 'creation-with-upload', 'expiration', 'termination'];

  constructor(private readonly o: TusStoreOptions) {
    super();
    this.extensions = [...TusStore.EXTENSIONS];
  }

  override getExpiration(): number {
    return this.o.expiryMs;
  }

  override async create(upload: Upload): Promise<Upload> {
    const call = current();
    const meta = upload.metadata ?? {};
    if (upload.size === undefined) throw errors.invalidArgument('Upload-Length is required (deferred lengths are not supported)', 'Upload-Length');
    // Kept pending as long as the tus upload lives (Upload-Expires), not UPLOAD_PENDING_MS.
    const session = await UploadSession.begin(
      this.o,
      call,
      { path: meta.path, filename: meta.filename ?? '', onConflict: meta.onConflict, onConflictField: 'Upload-Metadata.onConflict', ...tusConditions(meta) },
      { declaredSize: upload.size, idleMs: this.o.expiryMs },
    );
    const hasher = await createSHA256();
    hasher.init();
    const state: TusState = {
      userId: call.userId,
      uploadId: session.uploadId,
      size: upload.size,
      metadata: meta,
      creationDate: new Date().toISOString(),
      putUrl: session.target.putUrl,
      partSize: session.target.partSize,
      maxBytes: session.target.maxBytes,
      parts: [],
      hash: Buffer.from(hasher.save()).toString('base64'),
      tail: { slot: 0, bytes: 0 },
    };
    // The empty file is whole at creation: stored now, as tus's creation then reports it done.
    if (upload.size === 0) await this.finish(upload.id, state, Buffer.alloc(0), session);
    else await this.o.repo.put(upload.id, state, this.expiresAt(state));
    return new Upload({ id: upload.id, size: upload.size, offset: 0, metadata: meta, creation_date: state.creationDate });
  }

  override async getUpload(id: string): Promise<Upload> {
    const state = await this.load(id);
    return new Upload({ id, size: state.size, offset: this.offsetOf(state), metadata: state.metadata, creation_date: state.creationDate });
  }

  override async remove(id: string): Promise<void> {
    const state = await this.load(id);
    await this.o.repo.delete(id);
    if (!state.committedPath) await this.session(state, current()).abortNow();
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const call = current();
    const state = await this.load(id);
    if (state.committedPath) return state.size;
    // tus checked the offset under its lock; a mismatch here is a record changed meanwhile.
    if (offset !== this.offsetOf(state)) throw ERRORS.INVALID_OFFSET;
    const session = this.session(state, call);
    let urls: { put: string[]; get: string[] } | undefined;
    const tailUrls = async () => (urls ??= await session.tailUrls());
    const idle = new IdleTimer(this.o.idleTimeoutMs, () => {
      stream.destroy(new CutOff('the upload stalled'));
      call.cut();
    });
    // The bytes after the last whole part, in one buffer of at most a part (grown as they come).
    const part = new PartBuffer(state.partSize);
    // Set while a part goes to the store: a failure then is the store's, not a client cut off.
    let storing = false;
    const seal = async () => {
      idle.stop();
      storing = true;
      await this.sealPart(id, state, part.bytes(), session);
      storing = false;
      part.reset();
      idle.start();
    };
    try {
      if (state.tail.bytes > 0) {
        storing = true;
        part.fill(await this.readTail((await tailUrls()).get[state.tail.slot]!, state.tail.bytes));
        storing = false;
      }
      idle.start();
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        idle.touch();
        if (this.sealedBytes(state) + part.length + chunk.byteLength > state.size) throw errors.invalidArgument('more bytes than Upload-Length', 'Upload-Length');
        for (let offset = 0; offset < chunk.byteLength; ) {
          // A whole part with more bytes after it is not the last one: it goes to the store now.
          if (part.full) await seal();
          offset += part.fill(chunk, offset);
        }
      }
      // A whole part that is not the last one goes now too: a tail is always less than a part.
      if (part.full && this.sealedBytes(state) + state.partSize < state.size) await seal();
    } catch (err) {
      // Cut off or stalled: what came after the last whole part is dropped (the tail written
      // before stays while no part was sealed since); the client resumes from HEAD's offset.
      if (err instanceof AppError) throw err;
      if (storing) throw errors.unavailable('the object store', err);
      return this.offsetOf(state);
    } finally {
      idle.stop();
    }
    const tail = part.bytes();
    if (this.sealedBytes(state) + tail.byteLength === state.size) {
      await this.finish(id, state, tail, session);
      return state.size;
    }
    if (tail.byteLength > 0) {
      const slot = state.tail.slot === 0 ? 1 : 0;
      await this.o.store.put((await tailUrls()).put[slot]!, tail, AbortSignal.timeout(STORE_DEADLINE_MS));
      state.tail = { slot, bytes: tail.byteLength };
    } else state.tail = { ...state.tail, bytes: 0 };
    await this.o.repo.put(id, state, this.expiresAt(state));
    return this.offsetOf(state);
  }

  /** The last bytes: the last part (or the single PUT), then the commit under the upload rules. */
  private async finish(id: string, state: TusState, tail: Buffer, session: UploadSession): Promise<void> {
    const hasher = await this.hasher(state);
    hasher.update(tail);
    try {
      // The single PUT's URL was made at creation and may have expired since (an upload resumed
      // hours later): a body that arrives later goes as one part, under a URL asked for now.
      if (state.parts.length === 0 && tail.byteLength === 0) await session.putWhole(tail);
      else state.parts.push(await session.putPart(state.parts.length + 1, tail));
      const committed = await session.commit({ size: state.size, sha256: hasher.digest('hex'), parts: state.parts });
      await this.o.repo.put(id, { ...state, parts: [], tail: { slot: 0, bytes: 0 }, committedPath: committed.path }, this.expiresAt(state));
    } catch (err) {
      // A conflict found at commit (or any failure there): nothing is stored and the upload ends.
      await this.o.repo.delete(id);
      await session.abortNow();
      throw err;
    }
  }

  private async sealPart(id: string, state: TusState, part: Buffer, session: UploadSession): Promise<void> {
    const hasher = await this.hasher(state);
    state.parts.push(await session.putPart(state.parts.length + 1, part));
    hasher.update(part);
    state.hash = Buffer.from(hasher.save()).toString('base64');
    state.tail = { ...state.tail, bytes: 0 };
    await this.o.repo.put(id, state, this.expiresAt(state));
  }

  /** The tail object's bytes (fewer than a part), checked against the length the state records. */
  private async readTail(url: string, bytes: number): Promise<Buffer> {
    const res = await this.o.store.get(url, undefined, AbortSignal.timeout(STORE_DEADLINE_MS));
    const chunks: Buffer[] = [];
    for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
    const tail = Buffer.concat(chunks);
    if (tail.byteLength !== bytes) throw errors.internal(new Error(`a tus tail object holds ${tail.byteLength} bytes, not ${bytes}`));
    return tail;
  }

  private session(state: TusState, call: UploadCall): UploadSession {
    return UploadSession.resume(this.o, call, state.uploadId, { putUrl: state.putUrl, partSize: state.partSize, maxBytes: state.maxBytes });
  }

  private async hasher(state: TusState) {
    const hasher = await createSHA256();
    hasher.load(Buffer.from(state.hash, 'base64'));
    return hasher;
  }

  private sealedBytes(state: TusState): number {
    return state.parts.length * state.partSize;
  }

  private offsetOf(state: TusState): number {
    return state.committedPath ? state.size : this.sealedBytes(state) + state.tail.bytes;
  }

  /** When an upload's record, and with it the upload, expires (ms): its creation + TUS_UPLOAD_EXPIRY_MS. */
  expiresAt(state: TusState): number {
    return Date.parse(state.creationDate) + this.o.expiryMs;
  }

  /** The record of an upload of the caller's (another user's is as absent as a missing one). */
  private async load(id: string): Promise<TusState> {
    const state = await this.o.repo.get(id);
    if (!state || state.userId !== current().userId) throw ERRORS.FILE_NOT_FOUND;
    return state;
  }
}
