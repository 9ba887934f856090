import type { HistoryRecord, IndexEntry } from './entries.js';
import type { LineMatch, QuerySpec } from './matcher.js';

export type ConflictMode = 'error' | 'overwrite' | 'uuid';

/**
 * A write's precondition on the file at its path (docs/api/files.md#preconditions), decided in
 * the write's own atomic step: '' none, '*' nothing may be there (If-None-Match), else the
 * sha256 the file there must have (If-Match).
 */
export type Precondition = string;

/** An upload between BeginUpload and its commit or abort. */
export interface PendingUpload {
  /** Where the bytes go (a fresh object key). */
  key: string;
  /** The destination as resolved at the start (the commit checks again). */
  path: string;
  mode: ConflictMode;
  /** The path to take instead when the name is taken and mode is uuid. */
  uuidPath: string;
  /** Checked again at the commit (If-Match / If-None-Match); absent: none. */
  precondition?: Precondition;
  /** The store's multipart upload id, once parts are asked for. */
  multipartId?: string;
  mimeType: string;
  /** How long it may go without a call before the sweeper ends it, when the caller asked for longer than UPLOAD_PENDING_MS (a resumable upload). */
  idleMs?: number;
  /**
   * Set once a resumable upload keeps an unfinished part in the store between its requests
   * (objects `<key>.t0` and `<key>.t1`, written in turn): they go with the upload's end.
   */
  tail?: boolean;
}

/** One page of a listing from the index. */
export type IndexListPage =
  | { kind: 'file'; entry: IndexEntry }
  | {
      kind: 'directory';
      entries: { path: string; entry: IndexEntry | undefined }[];
      more: boolean;
      /** The user's latest change when the page was read: equal versions, one state of the tree. */
      version: string;
    };

export interface MoveOutcome {
  path: string;
  kind: 'file' | 'directory';
}

/**
 * The metadata index of every user's tree. Each change is atomic: it checks the path rules,
 * writes the entries, appends to the user's changes feed and queues the event (`event`: a
 * CloudEvent JSON template whose type, subject and data the index fills in), or refuses with
 * the contract's error and changes nothing.
 */
export interface FileIndex {
  /**
   * Refused with QUOTA_EXCEEDED when the new bytes would take the user's usage past `quotaBytes`
   * (0: no quota), or a new path the user's entries past MAX_FILES. The entry's `mtime` is the
   * commit's own time, the one its history record keeps (whatever `entry.mtime` says).
   */
  commit(userId: string, input: { path: string; mode: ConflictMode; uuidPath: string; entry: IndexEntry; uploadId: string; event: string; quotaBytes: number; precondition?: Precondition; summary?: Buffer | undefined }): Promise<{ path: string; replaced: boolean }>;
  /** The commit's checks alone: what is at `path` now, or the refusal (QUOTA_EXCEEDED when the quota is full). */
  precheck(userId: string, path: string, mode: ConflictMode, quotaBytes: number, precondition?: Precondition): Promise<'free' | 'file' | 'directory'>;
  /**
   * The user's files, the bytes of everything they reference (files, revisions, trash, pins), each
   * object once, and the entries MAX_FILES counts (the tree's files and folders and the trash's
   * paths, docs/api/usage.md#entry-quota) with that limit.
   */
  usage(userId: string): Promise<{ count: number; bytes: number; entries: number; maxFiles: number }>;
  /** `ifMatch`: the sha256 the file at `path` must have ('' for none), else PRECONDITION_FAILED. An empty explicit folder goes without `recursive`. */
  delete(userId: string, path: string, recursive: boolean, event: string, ifMatch?: string): Promise<{ kind: 'file' | 'directory' }>;
  /**
   * Deletes for good: the file at `path` (current or in the trash), or with `recursive` all at
   * or below it with every history; the bytes are queued as garbage due at once.
   */
  purge(userId: string, path: string, recursive: boolean, event: string, ifMatch?: string): Promise<{ kind: 'file' | 'directory' | 'history' }>;
  /** `ifMatch` guards `from`, `ifMatchTo` the file `to` replaces (one that holds replaces it whatever `mode` says). */
  move(userId: string, input: { op: 'move' | 'copy'; from: string; to: string; mode: ConflictMode; uuidPath: string; event: string; ifMatch?: string; ifMatchTo?: string }): Promise<MoveOutcome>;
  /** An explicit folder with its missing parents (docs/api/files.md#folders); `created` false when a directory was there. */
  createDirectory(userId: string, path: string, event: string): Promise<{ created: boolean }>;
  /**
   * Up to `limit` entries after `after` ('' = from the start), in byte order; with `from` (a
   * recursive listing only) from that path on, itself included.
   */
  list(userId: string, input: { path: string; recursive: boolean; after: string; limit: number; from?: string }): Promise<IndexListPage>;
  stat(userId: string, paths: readonly string[]): Promise<(IndexEntry | 'directory' | undefined)[]>;
  pin(userId: string, agentId: string, paths: readonly string[]): Promise<IndexEntry[]>;
  unpinAgent(userId: string, agentId: string): Promise<number>;
  addUpload(userId: string, id: string, upload: PendingUpload, expiresAt: number): Promise<void>;
  getUpload(userId: string, id: string): Promise<PendingUpload | undefined>;
  /**
   * Reserves quota for uploads' bytes before they go to the store, all in one step or none:
   * each `totalBytes` is what that upload will have sent (a running total). QUOTA_EXCEEDED when
   * the reservations and the usage would pass `quotaBytes` (0: none); UNAVAILABLE when an upload
   * is gone.
   */
  reserveUpload(userId: string, reservations: readonly { id: string; totalBytes: number }[], quotaBytes: number): Promise<void>;
  touchUpload(userId: string, id: string, upload: PendingUpload, expiresAt: number): Promise<boolean>;
  /**
   * Ends an upload that will not be committed (aborted or refused): its record goes and its
   * object is queued as garbage, in one step. Undefined when it was already claimed or committed.
   */
  claimUpload(userId: string, id: string): Promise<PendingUpload | undefined>;
  /** A path's history, newest first, and what is at the path now, as of one moment. */
  history(userId: string, path: string): Promise<{ current: IndexEntry | 'directory' | undefined; records: HistoryRecord[] }>;
  /** The content of one revision of a path (its entry carries that revision), or undefined. */
  revision(userId: string, path: string, revision: string): Promise<IndexEntry | undefined>;
  /** The trashed files directly in `path` (or anywhere below it), each with its deletion record. */
  trash(userId: string, path: string, recursive: boolean): Promise<{ path: string; record: HistoryRecord }[]>;
  /** Makes a revision's bytes the file at `path` again (a new revision); REVISION_NOT_FOUND or PATH_CONFLICT. */
  restore(userId: string, input: { path: string; revision: string; event: string; ifMatch?: string }): Promise<{ entry: IndexEntry; replaced: boolean }>;
  /** Restores every trashed file at or below `path` to its last content, in one step. */
  restoreTree(userId: string, input: { path: string; event: string; ifMatch?: string }): Promise<{ restored: number }>;
}

/** A byte range of an object: `length` undefined reads to the end. */
export interface ByteRange {
  offset: number;
  length?: number | undefined;
}

/** Immutable objects in an S3-compatible bucket. */
export interface BlobStore {
  /** A GET URL of the object, valid for `seconds`. */
  presignGet(key: string, seconds: number): Promise<string>;
  /** A PUT URL for the whole object, valid for `seconds`. */
  presignPut(key: string, seconds: number): Promise<string>;
  createMultipart(key: string, contentType: string): Promise<string>;
  presignPart(key: string, multipartId: string, partNumber: number, seconds: number): Promise<string>;
  completeMultipart(key: string, multipartId: string, parts: { partNumber: number; etag: string }[]): Promise<void>;
  /** Aborts an incomplete multipart upload (fine when it is already gone). */
  abortMultipart(key: string, multipartId: string): Promise<void>;
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  read(key: string, options?: { range?: ByteRange; signal?: AbortSignal }): Promise<AsyncIterable<Uint8Array>>;
  /** Removes the objects (absent ones are fine). */
  remove(keys: readonly string[]): Promise<void>;
  /** Every object under a prefix (the migration of the old layout). */
  list(prefix: string): AsyncIterable<{ key: string; size: number; lastModified: Date }>;
}

/** The user's changes feed (docs/api/files.md#changes). */
export interface ChangesLog {
  /** The id of the latest change, or '0-0'. */
  latest(userId: string): Promise<string>;
  /** Changes after `after`, at most `count`, waiting up to `waitMs` when there are none. */
  read(userId: string, after: string, count: number, waitMs: number, signal?: AbortSignal): Promise<LoggedChange[]>;
  /** Whether changes after `after` may have been trimmed away. */
  expired(userId: string, after: string): Promise<boolean>;
}

export interface LoggedChange {
  id: string;
  type: 'created' | 'updated' | 'deleted' | 'moved' | 'rewound';
  kind: 'file' | 'directory';
  path: string;
  from?: string;
  at: number;
  size?: number;
  sha256?: string;
}

/**
 * Trigram summaries of stored contents (see packages/platform/src/content-summary.ts), by object key: an object's bytes never
 * change, so a summary is never stale. A content without one is simply read by the search.
 */
export interface ContentSummaries {
  /** The summaries of the objects, in order (undefined: none yet). */
  get(userId: string, keys: readonly string[]): Promise<(Uint8Array | undefined)[]>;
  /** Keeps the summary of an object that something still references (else nothing is kept). */
  put(userId: string, key: string, summary: Uint8Array): Promise<void>;
}

/** A checkpoint as the index keeps it (docs/api/files.md#checkpoints); createdAt in ms. */
export interface StoredCheckpoint {
  checkpointId: string;
  path: string;
  label: string;
  createdAt: number;
  files: number;
  bytes: number;
}

/** A past state of a tree: a checkpoint's, or the one at a time (ms) from the histories. */
export type PastState = { checkpointId: string } | { at: number };

/**
 * Checkpoints, rewind and fork over the index (docs/api/files.md#checkpoints): each one atomic
 * step of O(N) index work for a tree of N files, no byte copied. Refusals are the contract's
 * errors; NOT_COVERED (a checkpoint of a path that is not at or above the one asked) comes back
 * as `{ notCovered: true }` so that the caller names its own field.
 */
export interface CheckpointIndex {
  create(userId: string, input: { checkpointId: string; path: string; label: string; max: number }): Promise<StoredCheckpoint>;
  get(userId: string, checkpointId: string): Promise<StoredCheckpoint | undefined>;
  /** Newest first, at or below `path`. */
  list(userId: string, path: string): Promise<StoredCheckpoint[]>;
  /** false when there was none. */
  delete(userId: string, checkpointId: string): Promise<boolean>;
  rewind(
    userId: string,
    input: { path: string; state: PastState; checkpointId: string; label: string; max: number; event: string; to: string },
  ): Promise<{ notCovered: true } | { notCovered: false; restored: number; removed: number; unchanged: number }>;
  fork(userId: string, input: { from: string; to: string; mode: ConflictMode; uuidPath: string; state: PastState; event: string; ifMatch: string; ifMatchTo: string }): Promise<{ notCovered: true } | { notCovered: false; path: string; kind: 'file' | 'directory' }>;
  /** How many checkpoints the user has, and the bytes of the distinct contents they hold. */
  usage(userId: string): Promise<{ count: number; bytes: number }>;
}

/** One text for a TextMatcher: its bytes (valid UTF-8), the query, where to resume, how many matches at most. */
export interface MatchJob {
  query: QuerySpec;
  bytes: Uint8Array;
  after: readonly [number, number];
  max: number;
}

/** The matches and the time they took (ms), or the time spent before the budget ran out. */
export type MatchOutcome = { overBudget: false; matches: LineMatch[]; ms: number } | { overBudget: true; ms: number };

/**
 * Matches texts off the service's event loop (docs/api/files.md#search), so no search holds up
 * another request. `owner` (the user) shares the matching fairly between owners; a job that runs
 * past `timeLeftMs` is stopped (overBudget); one whose `signal` aborts is stopped at once and
 * rejects with the signal's reason.
 */
export interface TextMatcher {
  match(job: MatchJob, options: { owner: string; timeLeftMs: number; signal?: AbortSignal | undefined }): Promise<MatchOutcome>;
}
