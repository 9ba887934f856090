/** One object as the store describes it. */
export interface StoredObject {
  key: string;
  size: number;
  lastModified: Date;
  /** Opaque content validator, without quotes. */
  etag: string;
}

/** One page of a listing: objects, and with a delimiter the common prefixes ("directories"). */
export interface ListPage {
  objects: StoredObject[];
  /** Each ends with the delimiter. */
  prefixes: string[];
}

/** A byte range of an object: `length` undefined reads to the end. */
export interface ByteRange {
  offset: number;
  length?: number | undefined;
}

/** An S3-compatible object store, one bucket. Keys are opaque strings to it. */
export interface ObjectStore {
  /** Metadata of one object; undefined when there is none. */
  stat(key: string): Promise<StoredObject | undefined>;
  /**
   * Objects under `prefix` in key (UTF-8 byte) order, page by page; `/` as delimiter when not
   * recursive. A small `firstPageSize` gets the first results sooner (a page costs the store
   * time in proportion to its size); later pages are full.
   */
  list(prefix: string, options: { recursive: boolean; firstPageSize?: number }): AsyncIterable<ListPage>;
  /** True when at least one object's key starts with `prefix`. */
  hasAny(prefix: string): Promise<boolean>;
  /**
   * The object's bytes (or one range of them): FILE_NOT_FOUND when absent; with `etag`,
   * UNAVAILABLE (retry) unless the object still has that etag. `signal` stops the read.
   */
  read(key: string, options?: { range?: ByteRange | undefined; etag?: string | undefined; signal?: AbortSignal | undefined }): Promise<AsyncIterable<Uint8Array>>;
  /**
   * Stores `body` under `key`. Memory stays bounded by the store's part size, whatever the
   * length. If `body` throws, nothing is left behind and the error is rethrown. With `commit`,
   * the object appears (whole, replacing any old one at once) only when `commit` calls
   * `finish`, after every byte is stored (`size` of them); if `commit` throws, nothing is left behind and its
   * error is rethrown.
   */
  write(key: string, body: AsyncIterable<Uint8Array>, options: { contentType: string; commit?: (finish: () => Promise<void>, size: number) => Promise<void> }): Promise<{ size: number }>;
  /** Server-side copy of an object of `size` bytes; `to` appears whole or not at all. */
  copy(from: string, to: string, size: number): Promise<void>;
  /** Removes the objects (absent ones are fine). */
  remove(keys: string[]): Promise<void>;
}

/** A mutual-exclusion lock shared by every replica of the service. */
export interface DistributedLock {
  /**
   * Runs `fn` while holding the lock named `name`, waiting for it when another holder has
   * it. Fails with UNAVAILABLE when it cannot be acquired in time.
   */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

export type Clock = () => Date;

/** A change of one workspace file, as other services hear of it (CONTRACT §8). */
export type FileChange =
  | { type: 'file.created' | 'file.updated'; path: string; size: number }
  | { type: 'file.deleted'; path: string };

/**
 * Where file changes are reported (a Redis outbox relayed to NATS in production). Called inside
 * the user's commit lock right after the change, so one user's reports come in the order of the
 * changes. Never fails the caller: the change has already happened and stands (see
 * adapters/file-events.outbox.ts for what that implies).
 */
export interface FileEvents {
  report(userId: string, changes: readonly FileChange[]): Promise<void>;
}

/** Agents whose knowledge has been removed, so that a pin arriving late cannot bring copies back. */
export interface RemovedAgents {
  mark(userId: string, agentId: string): Promise<void>;
  isRemoved(userId: string, agentId: string): Promise<boolean>;
}
