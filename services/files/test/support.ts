import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createLogger, createRedis, type RedisClient, RedisOutbox } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { createS3Client, ensureBucket, MinioBlobStore } from '../src/adapters/blobs.minio.js';
import { RedisChangesLog } from '../src/adapters/changes.redis.js';
import { IndexKeys, RedisFileIndex } from '../src/adapters/index.redis.js';
import { Sweeper } from '../src/adapters/sweeper.js';
import { Changes } from '../src/domain/changes.js';
import { Cursors } from '../src/domain/cursors.js';
import { Knowledge } from '../src/domain/knowledge.js';
import { Revisions } from '../src/domain/revisions.js';
import { Uploads } from '../src/domain/uploads.js';
import { Workspace } from '../src/domain/workspace.js';

export const MiB = 1024 * 1024;

/** The files domain on the tests' real S3 store (a fresh bucket) and Redis, as the service wires it. */
/** The Redis the next realFiles() use: the machine's single one, unless a suite points them at a Cluster. */
let redisTarget: { url: string; cluster: boolean } | undefined;

/** Points every realFiles() after this call at `target` (a Redis Cluster: see index-cluster.int.test.ts). */
export function useRedis(target: { url: string; cluster: boolean }): void {
  redisTarget = target;
}

export async function realFiles(
  options: { maxReadBytes?: number; pendingMs?: number; graceMs?: number; keepRevisions?: number; retentionMs?: number; quotaBytes?: number; summaryMaxBytes?: number; maxTreeEntries?: number; maxFiles?: number; keepChanges?: number; keepChangesMs?: number; clock?: () => number } = {},
) {
  const { s3: endpoint, redisUrl } = inject('infra');
  const bucket = `int-${randomBytes(8).toString('hex')}`;
  const client = createS3Client({ ...endpoint, bucket });
  await ensureBucket(client, bucket, endpoint.region);
  const blobs = new MinioBlobStore({ client, bucket });
  const redis: RedisClient = createRedis(redisTarget ?? { url: redisUrl });
  const logger = createLogger('files-test', 'silent');
  const keys = new IndexKeys(bucket);
  const outbox = new RedisOutbox({ redis, namespace: `files-test-${bucket}` });
  const tuning = {
    ...(options.keepRevisions !== undefined && { keepRevisions: options.keepRevisions }),
    ...(options.retentionMs !== undefined && { retentionMs: options.retentionMs }),
    ...(options.maxTreeEntries !== undefined && { maxTreeEntries: options.maxTreeEntries }),
    ...(options.maxFiles !== undefined && { maxFiles: options.maxFiles }),
    ...(options.keepChanges !== undefined && { keepChanges: options.keepChanges }),
    ...(options.keepChangesMs !== undefined && { keepChangesMs: options.keepChangesMs }),
    ...(options.clock && { clock: options.clock }),
  };
  const index = new RedisFileIndex({ redis, keys, outbox, ...tuning });
  const cursors = new Cursors(randomBytes(32));
  const log = new RedisChangesLog({ redis, keys });
  return {
    /** The index's settings (pass them to a RedisCheckpointIndex on the same keys). */
    tuning,
    client,
    bucket,
    blobs,
    redis,
    index,
    outbox,
    workspace: new Workspace({ index, blobs, cursors, maxReadBytes: options.maxReadBytes ?? 10 * MiB }),
    uploads: new Uploads({ index, blobs, logger, maxUploadBytes: 64 * MiB, partSize: 5 * MiB, pendingMs: options.pendingMs ?? 60_000, quotaBytes: options.quotaBytes ?? 0, summaryMaxBytes: options.summaryMaxBytes ?? MiB }),
    knowledge: new Knowledge({ index }),
    revisions: new Revisions({ index }),
    changes: new Changes({ log, cursors }),
    sweeper: new Sweeper({
      redis,
      index,
      blobs,
      logger,
      intervalMs: 1_000,
      graceMs: options.graceMs ?? 0,
      ...(options.retentionMs !== undefined && { retentionMs: options.retentionMs }),
      ...(options.clock && { clock: options.clock }),
    }),
    user: newUserId,
    /** Every object key in the bucket. */
    objects: async () => {
      const out: string[] = [];
      for await (const o of blobs.list('')) out.push(o.key);
      return out.sort();
    },
    close: async () => {
      log.close();
      await redis.quit();
    },
  };
}

export type Files = Awaited<ReturnType<typeof realFiles>>;

/** Stores a small file through the service's own path (the one project context files take). */
export function put(files: Files, userId: string, path: string, content: string, overwrite = false) {
  return files.uploads.writeFile(userId, path, Buffer.from(content, 'utf8'), overwrite);
}

/** Every entry path under `path`, recursively. */
export async function tree(files: Files, userId: string, path = '/files'): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await files.workspace.list(userId, path, true)).entries) out.push(e.entry ? e.path : `${e.path}/`);
  return out;
}
