import { luaScript, type Logger, type RedisClient } from '@workspace/platform';
import type { BlobStore } from '../domain/ports.js';
import type { RedisFileIndex } from './index.redis.js';

/** Drops a user's marker only if nobody registered it again since it was read, and it is old. */
const RELEASE = luaScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and score == ARGV[2] and tonumber(score) < tonumber(ARGV[3]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`, { allowOom: true });

/** Sets a user's next retention time, unless a write made it earlier since it was read. */
const RESCHEDULE = luaScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and score == ARGV[2] then return redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
return 0`);

/** Markers younger than this are kept: any write that registered one has finished by then. */
const MARKER_GRACE_MS = 60_000;
const USERS_PER_ROUND = 500;
const ITEMS_PER_USER = 1_000;

export interface SweeperOptions {
  redis: RedisClient;
  index: RedisFileIndex;
  blobs: BlobStore;
  logger: Logger;
  intervalMs: number;
  /** How long an object stays after nothing references it (downloads in flight still read it). */
  graceMs: number;
  /** How long a revision, or a file in the trash, is kept once it stopped being current (FILE_REVISION_DAYS). */
  retentionMs?: number;
  /** Told how many objects were removed, for metrics. */
  onRemoved?: (count: number) => void;
  clock?: () => number;
}

/**
 * Reclaims bytes: revisions and trashed files past their retention (docs/api/files.md#retention),
 * objects that no entry, record or pin references any more (after a grace period), and uploads that
 * were neither committed nor aborted in time (a crash, a client gone). Every
 * replica sweeps; each item is claimed atomically first, so exactly one deletes it, and the
 * claim comes before the deletion, so a late commit of an expired upload fails instead of
 * pointing at deleted bytes.
 */
export class Sweeper {
  readonly #o: Required<SweeperOptions>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(options: SweeperOptions) {
    this.#o = { onRemoved: () => undefined, clock: Date.now, retentionMs: 30 * 24 * 3600 * 1000, ...options };
  }

  start(): void {
    const tick = () => {
      this.#running = this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => this.#o.logger.warn({ err }, 'sweep failed; retrying at the next round'))
        .finally(() => {
          this.#running = undefined;
          if (this.#timer) this.#timer = setTimeout(tick, this.#o.intervalMs * (0.75 + Math.random() / 2)).unref();
        });
    };
    this.#timer = setTimeout(tick, this.#o.intervalMs * Math.random()).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One round over the users with work; returns how many objects were removed. */
  async sweep(): Promise<number> {
    const { redis, index } = this.#o;
    // First what the retention drops: its bytes are then queued like any other garbage.
    await this.#retention();
    const flat = await redis.zrange(index.keys.sweep, '0', String(USERS_PER_ROUND - 1), 'WITHSCORES');
    let removed = 0;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const tag = flat[i]!;
      await this.#uploads(tag);
      removed += await this.#garbage(tag);
      if (!(await index.hasSweepWork(tag))) {
        await redis.eval(RELEASE, 1, index.keys.sweep, tag, flat[i + 1]!, String(this.#o.clock() - MARKER_GRACE_MS));
      }
    }
    if (removed > 0) this.#o.onRemoved(removed);
    return removed;
  }

  /**
   * The retention by age of the users who are due. Each user's next time follows from what is
   * left; a write in between may only have made it earlier (ZADD LT), and then it stands.
   */
  async #retention(): Promise<void> {
    const { redis, index, retentionMs } = this.#o;
    const now = this.#o.clock();
    const due = await redis.zrangebyscore(index.keys.retain, '-inf', now, 'WITHSCORES', 'LIMIT', 0, USERS_PER_ROUND);
    for (let i = 0; i + 1 < due.length; i += 2) {
      const tag = due[i]!;
      const { dropped, next, more } = await index.retain(tag, now - retentionMs, ITEMS_PER_USER);
      // Their bytes wait in the user's garbage: the user must be on the sweeper's list (after the drop, so it cannot be released in between).
      if (dropped > 0) await redis.zadd(index.keys.sweep, this.#o.clock(), tag);
      // Users without histories stay listed, looked at once a retention period: dropping them could lose a write racing the drop.
      const at = more ? now : (next ?? now) + retentionMs;
      await redis.eval(RESCHEDULE, 1, index.keys.retain, tag, due[i + 1]!, String(at));
    }
  }

  /** Ends uploads past their expiry: the claim queues their bytes as garbage; their multipart uploads are aborted. */
  async #uploads(tag: string): Promise<number> {
    const { index, blobs } = this.#o;
    let ended = 0;
    for (const id of await index.expiredUploads(tag, this.#o.clock(), ITEMS_PER_USER)) {
      const upload = await index.claimUploadOf(tag, id);
      if (!upload) continue;
      ended++;
      if (upload.multipartId) {
        await blobs.abortMultipart(upload.key, upload.multipartId).catch((err: unknown) => {
          // The bucket's lifecycle rule (ensureAbortRule) aborts it in a day.
          this.#o.logger.warn({ err, key: upload.key }, 'could not abort an expired multipart upload');
        });
      }
    }
    return ended;
  }

  async #garbage(tag: string): Promise<number> {
    const { index, blobs } = this.#o;
    const keys = await index.claimGarbage(tag, this.#o.clock() - this.#o.graceMs, ITEMS_PER_USER);
    if (keys.length === 0) return 0;
    try {
      await blobs.remove(keys);
      return keys.length;
    } catch (err) {
      await index.requeueGarbage(tag, keys);
      throw err;
    }
  }
}
