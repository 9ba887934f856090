import type { RedisClient } from '@workspace/platform';

/** One tus upload as every gateway replica sees it (CONTRACT §15): all of it lives in Redis. */
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
  /** Parts already in the store, in order. */
  parts: { partNumber: number; etag: string }[];
  /** SHA-256 state (hash-wasm `save()`, base64) after the bytes of `parts`. */
  hash: string;
  /** Set once committed: the upload is complete and stored at `path`. */
  committedPath?: string;
}

/** The state and the bytes received after the last whole part (fewer than a part), kept together. */
export interface TusRecord {
  state: TusState;
  tail: Buffer;
}

const key = (id: string) => `tus:{${id}}`;

/**
 * tus uploads in one Redis hash each (`state` JSON and `tail` bytes, written together), which
 * expires with the upload: an abandoned upload's record goes by itself, and its parts with the
 * files service's pending upload (the sweeper).
 */
export class TusStateRepo {
  constructor(private readonly redis: RedisClient) {}

  async get(id: string): Promise<TusRecord | undefined> {
    const [state, tail] = await this.redis.hmgetBuffer(key(id), 'state', 'tail');
    if (!state) return undefined;
    return { state: JSON.parse(state.toString('utf8')) as TusState, tail: tail ?? Buffer.alloc(0) };
  }

  /** Writes state and tail in one step; `expiresAt` (ms) is when the record goes. */
  async put(id: string, record: TusRecord, expiresAt: number): Promise<void> {
    await this.redis.multi().hset(key(id), 'state', JSON.stringify(record.state), 'tail', record.tail).pexpireat(key(id), expiresAt).exec();
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(key(id));
  }
}
