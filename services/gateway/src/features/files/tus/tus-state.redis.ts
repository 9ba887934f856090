import type { RedisClient } from '@workspace/platform';

/**
 * One tus upload as every gateway replica sees it: small state only (no bytes; those are in
 * the store, as parts of the multipart upload or as its tail object).
 */
export interface TusState {
  userId: string;
  /** The files service's pending upload (BeginUpload). */
  uploadId: string;
  size: number;
  metadata: Record<string, string | null>;
  creationDate: string;
  /** From BeginUpload: the single-PUT URL, the part size, the largest size accepted. */
  putUrl: string;
  partSize: number;
  maxBytes: number;
  /** Parts already in the store, in order. */
  parts: { partNumber: number; etag: string }[];
  /** SHA-256 state (hash-wasm `save()`, base64) after the bytes of `parts`. */
  hash: string;
  /**
   * The bytes after the last whole part (fewer than a part), kept in the store in tail object
   * `slot` (0 or 1). A PATCH writes the other slot and then points here, so the object this
   * names is never the one being written.
   */
  tail: { slot: 0 | 1; bytes: number };
  /** Set once committed: the upload is complete and stored at `path`. */
  committedPath?: string;
}

/** Records of the earlier layout (state and tail bytes in a hash) are not read: they expire by themselves. */
const key = (id: string) => `tus:v2:{${id}}`;

/**
 * tus uploads, one small JSON string each, which expires with the upload: an abandoned
 * upload's record goes by itself, and its parts and tail with the files service's pending
 * upload (the sweeper).
 */
export class TusStateRepo {
  constructor(private readonly redis: RedisClient) {}

  async get(id: string): Promise<TusState | undefined> {
    const raw = await this.redis.get(key(id));
    return raw ? (JSON.parse(raw) as TusState) : undefined;
  }

  /** `expiresAt` (ms) is when the record goes. */
  async put(id: string, state: TusState, expiresAt: number): Promise<void> {
    await this.redis.set(key(id), JSON.stringify(state), 'PXAT', expiresAt);
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(key(id));
  }
}
