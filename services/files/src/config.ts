import { env, serviceConfig } from '@workspace/platform';
import { z } from 'zod';

const MiB = 1024 * 1024;

/**
 * MAX_TREE_ENTRIES unless set (docs/api/files.md#bounded-tree-work): the most entries one operation
 * on a tree touches in its one Redis step. Chosen from the figures in docs/benchmarks.md#bounded-tree-work
 * so that no such step passes about a second.
 */
export const DEFAULT_MAX_TREE_ENTRIES = 10_000;
/** MAX_FILES unless set (docs/api/usage.md#entry-quota): the entries one user may have. */
export const DEFAULT_MAX_FILES = 1_000_000;

/** Redis holds the metadata index (it must not evict: every service refuses an evicting Redis). */
export const configSchema = serviceConfig({ grpc: 50052, metrics: 9466 }).extend({
  /** MinIO or any S3-compatible store; `npm start` and the tests start s3rver when it is unset. */
  S3_ENDPOINT: env.url('http://127.0.0.1:9000'),
  S3_ACCESS_KEY: z.string().min(1).default('minioadmin'),
  S3_SECRET_KEY: z.string().min(1).default('minioadmin'),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')
    .default('workspace'),
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** Bytes one upload may have (inclusive); more → 413 and nothing stored. Default 5 GiB. */
  MAX_UPLOAD_BYTES: env.positiveInt(5 * 1024 * MiB),
  /** Bytes `files/read` returns as text (inclusive); more → 413 FILE_TOO_LARGE. Default 10 MiB. */
  MAX_READ_BYTES: env.positiveInt(10 * MiB),
  /** Part size of multipart uploads (raised when needed to fit MAX_UPLOAD_BYTES in 10,000 parts). */
  S3_PART_SIZE: z.coerce.number().int().min(5 * MiB).default(8 * MiB),
  /** An upload that asks for no part for this long (a crash, a client gone) is dropped by the sweeper. */
  UPLOAD_PENDING_MS: env.positiveInt(3_600_000),
  /**
   * How long bytes that nothing references any more are kept before the sweeper deletes them:
   * at least as long as the presigned URLs handed out (1 h), so a download or export in flight
   * of bytes just replaced still finds them.
   */
  FILE_GC_GRACE_MS: z.coerce.number().int().min(0).default(3_600_000),
  /** How often each replica sweeps (unreferenced bytes, expired uploads). */
  FILE_SWEEP_INTERVAL_MS: env.positiveInt(10_000),
  /**
   * Records kept in each path's history (docs/api/files.md#retention), the current file's included:
   * every write and every delete adds one; beyond it the oldest go and their bytes are reclaimed.
   */
  FILE_REVISIONS: env.positiveInt(100),
  /**
   * Days a revision is kept once it stopped being current, and a file in the trash once it was
   * deleted (docs/api/files.md#retention); then the sweeper drops it and reclaims its bytes.
   * Fractions allowed.
   */
  FILE_REVISION_DAYS: z.coerce.number().positive().default(30),
  /**
   * Bytes one user's objects may take (docs/api/usage.md#byte-quota): current files, revisions, the
   * trash and knowledge pins, each object once. An upload that would pass it → 403 QUOTA_EXCEEDED.
   * 10 GiB.
   */
  FILE_QUOTA_BYTES: env.positiveInt(10 * 1024 * MiB),
  /**
   * Files larger than this are skipped by the content search (docs/api/files.md#search): the
   * search reads each candidate whole. Default 1 MiB.
   */
  SEARCH_MAX_FILE_BYTES: env.positiveInt(MiB),
  /** Objects one search reads from the store at once (docs/api/files.md#search). */
  SEARCH_READ_CONCURRENCY: env.positiveInt(16),
  /**
   * Worker threads that match searches' texts, per replica (docs/api/files.md#search): the
   * service's event loop never runs a pattern. Each keeps one CPU busy while it matches.
   */
  SEARCH_WORKERS: env.positiveInt(1),
  /**
   * The matching time one search answer may take (docs/api/files.md#search), summed over its
   * files; past it the work stops and the answer is 422 SEARCH_TOO_EXPENSIVE. Default 10 s.
   */
  SEARCH_BUDGET_MS: env.positiveInt(10_000),
  /**
   * The most entries (files and folders, as a listing counts them) one operation on a tree — move,
   * copy, recursive delete, restore of a folder, purge, checkpoint, rewind, fork — touches
   * (docs/api/files.md#bounded-tree-work); a larger tree → 400 INVALID_ARGUMENT and nothing changes.
   */
  MAX_TREE_ENTRIES: env.positiveInt(DEFAULT_MAX_TREE_ENTRIES),
  /**
   * Entries one user may have (docs/api/usage.md#entry-quota): the files and folders of the tree
   * and the paths in the trash, each one, copies included; a change that would pass it → 403
   * QUOTA_EXCEEDED.
   */
  MAX_FILES: env.positiveInt(DEFAULT_MAX_FILES),
  /** Checkpoints one user may keep (docs/api/files.md#checkpoints); one more → 403 QUOTA_EXCEEDED. */
  MAX_CHECKPOINTS: env.positiveInt(100),
  /**
   * How often readiness asks the store again, at most (a GET of one key that holds nothing): the probe
   * runs every 2 s, and on a real S3 each ask is a paid request per replica.
   */
  STORE_PROBE_INTERVAL_MS: env.positiveInt(30_000),
  /** Long polls of the changes feed waiting at once per replica; more answer at once. */
  CHANGES_MAX_WAITERS: env.positiveInt(512),
});

export type FilesConfig = z.output<typeof configSchema>;

/**
 * The consumer group of the files services that share `bucket`: the index of a bucket lives
 * under its name, so each event must be handled once per bucket, not once per NATS. Replicas
 * of one deployment share it; deployments (or test stacks) on other buckets get their own.
 */
export function consumerGroup(bucket: string): string {
  return `files-${bucket.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

