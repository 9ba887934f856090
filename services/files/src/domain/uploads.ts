import { createHash, randomBytes } from 'node:crypto';
import { errors, summaryWithin, tenantKey, validSummary, type Logger } from '@workspace/platform';
import { mimeTypeOf } from './media-types.js';
import { eventTemplate } from './events.js';
import { baseName, childPath, parsePath, ROOT, type WorkspacePath } from './paths.js';
import type { BlobStore, ConflictMode, FileIndex, PendingUpload } from './ports.js';
import { uuidSibling } from './workspace.js';

export interface UploadInput {
  /** The destination as given; undefined when none was. */
  path: string | undefined;
  /** The file name from the multipart part header (may be empty). */
  filename: string;
  onConflict: ConflictMode;
  /**
   * How long the upload may go without a call before it is ended (a resumable upload that a
   * client may continue hours later); 0 or less than UPLOAD_PENDING_MS: UPLOAD_PENDING_MS.
   */
  idleMs?: number;
  /** Bytes to reserve now when they fit (an upper bound of the file's size); 0: none. */
  reserveHint?: number;
  /**
   * If-Match (docs/api/files.md#preconditions): commit only onto a file with exactly these bytes
   * (64 lowercase hex SHA-256), replacing it whatever onConflict says.
   */
  ifMatch?: string | undefined;
  /** If-None-Match: *: commit only where nothing is (never replaces). */
  ifNoneMatch?: boolean;
}

export interface StoredFile {
  path: string;
  size: number;
  mimeType: string;
  sha256: string;
  /** The revision the commit made (docs/api/files.md#revisions). */
  revision: string;
}

export interface UploadsOptions {
  index: FileIndex;
  blobs: BlobStore;
  logger: Logger;
  maxUploadBytes: number;
  partSize: number;
  /** How long an upload may go without asking for parts before the sweeper drops it. */
  pendingMs: number;
  /** A commit of at most this many bytes may bring the content's search summary (SEARCH_MAX_FILE_BYTES; 0: none is taken). */
  summaryMaxBytes?: number;
  /** FILE_QUOTA_BYTES (docs/api/usage.md#byte-quota): the bytes a user's objects may take, each once (0: no quota). */
  quotaBytes?: number;
  clock?: () => number;
}

const SHA256 = /^[0-9a-f]{64}$/;
const UPLOAD_ID = /^up_[0-9a-f]{32}$/;
export const MAX_PARTS = 10_000;
/** The longest an upload may be kept pending between calls: a week, the longest-lived presigned URL of S3. */
export const MAX_IDLE_MS = 7 * 24 * 3_600_000;

/** The object key of new bytes: fixed length, never derived from a path, written once. */
export function newObjectKey(userId: string): string {
  return `b/${tenantKey(userId)}/${randomBytes(16).toString('hex')}`;
}

/**
 * Storing files (docs/api/files.md#upload). The bytes go to a fresh object by presigned URLs (the
 * caller streams them); the file appears only at the commit, one atomic step of the index that
 * checks the path rules again, so a failed, aborted or refused upload leaves nothing visible, an
 * overwrite keeps the old content whole until then, and of concurrent `error` uploads to one
 * new path exactly one wins. Every upload is recorded as pending until its commit or abort, so
 * the sweeper removes what a crash left behind.
 */
export class Uploads {
  readonly #o: Required<UploadsOptions>;

  constructor(options: UploadsOptions) {
    this.#o = { clock: Date.now, quotaBytes: 0, summaryMaxBytes: 0, ...options };
  }

  /** Resolves the destination, refuses what would conflict now, and records the upload. */
  async begin(userId: string, input: UploadInput): Promise<{ uploadId: string; path: string; putUrl: string; partSize: number; maxBytes: number; reservedBytes: number; summaryMaxBytes: number }> {
    const precondition = preconditionOf(input);
    const target = await this.#destination(userId, input);
    // A precondition that holds decides the conflict: If-Match replaces the file it names.
    const mode: ConflictMode = input.ifMatch !== undefined ? 'overwrite' : input.onConflict;
    // Refused now (before a byte is sent, and before anything is recorded) when it fails already;
    // the commit decides again, in its own atomic step.
    const found = await this.#o.index.precheck(userId, target.path, mode, this.#o.quotaBytes, precondition);
    const uuidPath = uuidSibling(target);
    if (mode === 'uuid' && found !== 'free' && !uuidPath) throw errors.invalidPath('invalid path: the name is too long to add a unique suffix', target.path);
    const path = mode === 'uuid' && found !== 'free' ? uuidPath : target.path;
    const idleMs = Math.min(MAX_IDLE_MS, input.idleMs ?? 0);
    const upload: PendingUpload = {
      key: newObjectKey(userId),
      path: target.path,
      mode,
      ...(precondition !== '' && { precondition }),
      uuidPath,
      mimeType: mimeTypeOf(baseName(target)),
      ...(idleMs > this.#o.pendingMs && { idleMs }),
    };
    const uploadId = `up_${randomBytes(16).toString('hex')}`;
    await this.#o.index.addUpload(userId, uploadId, upload, this.#o.clock() + (upload.idleMs ?? this.#o.pendingMs));
    const [putUrl, reservedBytes] = await Promise.all([this.#o.blobs.presignPut(upload.key, this.#urlSeconds()), this.#reserveHint(userId, uploadId, input.reserveHint ?? 0)]);
    return { uploadId, path, putUrl, partSize: this.#o.partSize, maxBytes: this.#o.maxUploadBytes, reservedBytes, summaryMaxBytes: this.#o.summaryMaxBytes };
  }

  /** URLs for parts first… of the multipart upload (started on the first call). */
  async parts(userId: string, uploadId: string, first: number, count: number): Promise<string[]> {
    if (!Number.isInteger(first) || first < 1 || !Number.isInteger(count) || count < 1 || first + count - 1 > MAX_PARTS) {
      throw errors.invalidArgument(`part numbers must lie in 1…${MAX_PARTS}`, 'firstPartNumber');
    }
    const upload = await this.#pending(userId, uploadId);
    upload.multipartId ??= await this.#o.blobs.createMultipart(upload.key, upload.mimeType);
    if (!(await this.#o.index.touchUpload(userId, uploadId, upload, this.#o.clock() + (upload.idleMs ?? this.#o.pendingMs)))) {
      await this.#o.blobs.abortMultipart(upload.key, upload.multipartId);
      throw gone();
    }
    const seconds = this.#urlSeconds();
    const numbers = Array.from({ length: count }, (_, i) => first + i);
    return Promise.all(numbers.map((n) => this.#o.blobs.presignPart(upload.key, upload.multipartId!, n, seconds)));
  }

  /**
   * URLs of the two objects a resumable upload keeps its unfinished part in between requests
   * (written in turn, so the one in use is never overwritten; both go when the upload ends),
   * by slot: `put[0]`, `get[0]` for `<key>.t0` and so on. Also keeps the upload pending.
   */
  async tail(userId: string, uploadId: string): Promise<{ put: string[]; get: string[] }> {
    const upload = await this.#pending(userId, uploadId);
    upload.tail = true;
    if (!(await this.#o.index.touchUpload(userId, uploadId, upload, this.#o.clock() + (upload.idleMs ?? this.#o.pendingMs)))) throw gone();
    const seconds = this.#urlSeconds();
    const slots = [`${upload.key}.t0`, `${upload.key}.t1`];
    const [put, get] = await Promise.all([
      Promise.all(slots.map((key) => this.#o.blobs.presignPut(key, seconds))),
      Promise.all(slots.map((key) => this.#o.blobs.presignGet(key, seconds))),
    ]);
    return { put, get };
  }

  /**
   * Reserves quota for the bytes the caller is about to send (`totalBytes`: all it will have
   * sent then), so that uploads that together would pass FILE_QUOTA_BYTES are refused while
   * they stream, not after their bytes reached the store. Settled by the commit, given back by
   * an abort or expiry.
   */
  async reserve(userId: string, uploadId: string, totalBytes: number): Promise<void> {
    await this.reserveAll(userId, [{ uploadId, totalBytes }]);
  }

  /**
   * `reserve` for several uploads at once (an import's knowledge files): every one fits, or
   * none is reserved. The same rules: MAX_UPLOAD_BYTES for each, FILE_QUOTA_BYTES for all.
   */
  async reserveAll(userId: string, reservations: readonly { uploadId: string; totalBytes: number }[]): Promise<void> {
    for (const { uploadId, totalBytes } of reservations) {
      if (!UPLOAD_ID.test(uploadId)) throw errors.invalidArgument('unknown upload id', 'uploadId');
      if (!Number.isSafeInteger(totalBytes) || totalBytes < 0) throw errors.invalidArgument('totalBytes must be a whole number of bytes', 'totalBytes');
      if (totalBytes > this.#o.maxUploadBytes) throw errors.payloadTooLarge(this.#o.maxUploadBytes);
    }
    if (reservations.length === 0) return;
    await this.#o.index.reserveUpload(userId, reservations.map((r) => ({ id: r.uploadId, totalBytes: r.totalBytes })), this.#o.quotaBytes);
  }

  /** Reserves `hint` bytes (at most the limit) when they fit beside the quota; → what was reserved. */
  async #reserveHint(userId: string, uploadId: string, hint: number): Promise<number> {
    const bytes = Math.min(hint, this.#o.maxUploadBytes);
    if (!Number.isSafeInteger(bytes) || bytes <= 0) return 0;
    try {
      await this.#o.index.reserveUpload(userId, [{ id: uploadId, totalBytes: bytes }], this.#o.quotaBytes);
      return bytes;
    } catch (err) {
      if ((err as { code?: string }).code === 'QUOTA_EXCEEDED') return 0;
      throw err;
    }
  }

  /**
   * Makes the uploaded bytes the file, or refuses and drops them. `summary`: the content's
   * search summary as the uploader computed it from the bytes (stored with the commit, so search
   * need not read the file); only for a body of at most `summaryMaxBytes`, in the shape
   * `summarize` gives.
   */
  async commit(userId: string, uploadId: string, input: { size: number; sha256: string; parts: { partNumber: number; etag: string }[]; summary?: Buffer | undefined }): Promise<StoredFile> {
    if (!SHA256.test(input.sha256)) throw errors.invalidArgument('sha256 must be 64 lowercase hex digits', 'sha256');
    if (!Number.isSafeInteger(input.size) || input.size < 0) throw errors.invalidArgument('size must be a whole number of bytes', 'size');
    if (input.size > this.#o.maxUploadBytes) throw errors.payloadTooLarge(this.#o.maxUploadBytes);
    const summary = input.summary?.length ? input.summary : undefined;
    if (summary && (this.#o.summaryMaxBytes === 0 || input.size > this.#o.summaryMaxBytes || !validSummary(summary))) {
      throw errors.invalidArgument(`summary must be a content summary, for a body of at most ${this.#o.summaryMaxBytes} bytes`, 'summary');
    }
    const upload = await this.#pending(userId, uploadId);
    if (input.parts.length > 0) {
      if (!upload.multipartId) throw errors.invalidArgument('parts were given but none were asked for', 'parts');
      await this.#o.blobs.completeMultipart(upload.key, upload.multipartId, input.parts);
    }
    const entry = { size: input.size, mtime: this.#o.clock(), sha256: input.sha256, key: upload.key, revision: newRevision() };
    try {
      const event = eventTemplate(userId, upload.path);
      const done = await this.#o.index.commit(userId, { path: upload.path, mode: upload.mode, uuidPath: upload.uuidPath, entry, uploadId, event, quotaBytes: this.#o.quotaBytes, precondition: upload.precondition ?? '', summary });
      return { path: done.path, size: input.size, mimeType: mimeTypeOf(baseName(parsePath(done.path))), sha256: input.sha256, revision: entry.revision };
    } catch (err) {
      if ((err as { code?: string }).code !== 'UNAVAILABLE') await this.abort(userId, uploadId);
      throw err;
    }
  }

  /**
   * Drops an upload that will not be committed (idempotent). The claim comes first, so a commit
   * racing it fails instead of pointing at bytes being deleted; the bytes themselves go with the
   * sweep (they were queued by the claim), also what a PUT still in flight writes.
   */
  async abort(userId: string, uploadId: string): Promise<void> {
    if (!UPLOAD_ID.test(uploadId)) return;
    const upload = await this.#o.index.claimUpload(userId, uploadId);
    if (upload?.multipartId) await this.#o.blobs.abortMultipart(upload.key, upload.multipartId);
  }

  /** Writes a small file in one piece (a project's context file). */
  async writeFile(userId: string, rawPath: string, content: Uint8Array, overwrite: boolean): Promise<StoredFile> {
    const target = parsePath(rawPath);
    if (target.segments.length === 0 || target.trailingSlash) throw errors.invalidPath('the path must name a file', rawPath);
    const mode: ConflictMode = overwrite ? 'overwrite' : 'error';
    await this.#o.index.precheck(userId, target.path, mode, this.#o.quotaBytes);
    const key = newObjectKey(userId);
    const mimeType = mimeTypeOf(baseName(target));
    const uploadId = `up_${randomBytes(16).toString('hex')}`;
    await this.#o.index.addUpload(userId, uploadId, { key, path: target.path, mode, uuidPath: '', mimeType }, this.#o.clock() + this.#o.pendingMs);
    await this.#o.blobs.put(key, content, mimeType);
    const summary = summaryWithin(content, this.#o.summaryMaxBytes);
    return this.commit(userId, uploadId, { size: content.byteLength, sha256: createHash('sha256').update(content).digest('hex'), parts: [], summary });
  }

  async #pending(userId: string, uploadId: string): Promise<PendingUpload> {
    if (!UPLOAD_ID.test(uploadId)) throw errors.invalidArgument('unknown upload id', 'uploadId');
    const upload = await this.#o.index.getUpload(userId, uploadId);
    if (!upload) throw gone();
    return upload;
  }

  /** What the user's files take against the byte quota and the entry quota (docs/api/usage.md#usage). */
  async usage(userId: string): Promise<{ count: number; bytes: number; quotaBytes: number; entries: number; maxFiles: number }> {
    return { ...(await this.#o.index.usage(userId)), quotaBytes: this.#o.quotaBytes };
  }

  /** Presigned URLs live as long as the upload may stay pending. */
  #urlSeconds(): number {
    return Math.max(60, Math.ceil(this.#o.pendingMs / 1000));
  }

  /** docs/api/files.md#upload: no path → /files/<filename>; `dir/` or an existing directory → <dir>/<filename>; else the path itself. */
  async #destination(userId: string, input: UploadInput): Promise<WorkspacePath> {
    const named = (dir: WorkspacePath) => {
      if (input.filename === '') throw errors.invalidArgument('the file part needs a filename unless path names the file', 'file');
      return childPath(dir, input.filename);
    };
    if (input.path === undefined) return named(parsePath(ROOT));
    const given = parsePath(input.path);
    if (given.trailingSlash || given.segments.length === 0) return named(given);
    const [found] = await this.#o.index.stat(userId, [given.path]);
    return found === 'directory' ? named(given) : given;
  }
}

/** The upload's precondition as the index takes it: '' none, '*' If-None-Match, else If-Match's sha256. */
function preconditionOf(input: UploadInput): string {
  if (input.ifMatch !== undefined && input.ifNoneMatch) throw errors.invalidArgument('give If-Match or If-None-Match, not both', 'If-None-Match');
  if (input.ifMatch !== undefined) {
    if (!SHA256.test(input.ifMatch)) throw errors.invalidArgument('If-Match must be the file\'s ETag: a quoted SHA-256 of 64 lowercase hex digits', 'If-Match');
    return input.ifMatch;
  }
  return input.ifNoneMatch ? '*' : '';
}

export function newRevision(): string {
  return `rev_${randomBytes(16).toString('hex')}`;
}

function gone() {
  return errors.unavailable('the upload (it expired or was aborted; send it again)');
}
