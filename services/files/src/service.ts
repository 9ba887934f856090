import { defineService, withUnavailableErrors } from '@workspace/platform';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { createS3Client, ensureAbortRule, ensureBucket, MinioBlobStore, storeProbe, type S3Settings } from './adapters/blobs.minio.js';
import { RedisChangesLog } from './adapters/changes.redis.js';
import { RedisCheckpointIndex } from './adapters/checkpoints.redis.js';
import { Checkpoints } from './domain/checkpoints.js';
import { IndexKeys, RedisFileIndex } from './adapters/index.redis.js';
import { MatchPool } from './adapters/match-pool.js';
import { migrateOldLayout } from './adapters/migration.js';
import { RedisContentSummaries } from './adapters/summaries.redis.js';
import { Sweeper } from './adapters/sweeper.js';
import { Changes } from './domain/changes.js';
import { Cursors } from './domain/cursors.js';
import { Knowledge } from './domain/knowledge.js';
import { KnowledgeTransfer } from './domain/knowledge-transfer.js';
import { knowledgeTransferHandlers } from './grpc/knowledge-transfer.handlers.js';
import { Revisions } from './domain/revisions.js';
import { Search } from './domain/search.js';
import { MAX_PARTS, Uploads } from './domain/uploads.js';
import { Workspace } from './domain/workspace.js';
import { configSchema, consumerGroup } from './config.js';
import { filesHandlers } from './grpc/files.handlers.js';

/** FILE_REVISION_DAYS in milliseconds (at least one). */
export function retentionMsOf(days: number): number {
  return Math.max(1, Math.round(days * 24 * 3600 * 1000));
}

/** The smallest part size, in whole MiB and at least `preferred`, that fits `maxBytes` in 10,000 parts. */
export function partSizeFor(maxBytes: number, preferred: number): number {
  const mib = 1024 * 1024;
  return Math.max(5 * mib, preferred, Math.ceil(maxBytes / MAX_PARTS / mib) * mib);
}

/**
 * The files service: each user's tree in a Redis metadata index over immutable bytes in S3;
 * creates the bucket if missing and imports an old layout before serving. Ready while Redis
 * answers and the bucket exists.
 */
export const filesService = defineService({
  name: 'files',
  config: configSchema,
  async build(ctx) {
    const { logger, redis, config, metrics } = ctx;
    const s3: S3Settings = { endpoint: config.S3_ENDPOINT, accessKey: config.S3_ACCESS_KEY, secretKey: config.S3_SECRET_KEY, bucket: config.S3_BUCKET, region: config.S3_REGION };
    const client = createS3Client(s3);
    await ensureBucket(client, s3.bucket, s3.region);
    await ensureAbortRule(client, s3.bucket, logger);
    ctx.probe(storeProbe(client, s3.bucket, config.STORE_PROBE_INTERVAL_MS));
    const blobs = new MinioBlobStore({ client, bucket: s3.bucket });
    const keys = new IndexKeys(s3.bucket);
    // The index and the checkpoints share the scripts' settings: the retention and the bounds
    // (MAX_TREE_ENTRIES, MAX_FILES), each passed to every script as an argument.
    const settings = { keepRevisions: config.FILE_REVISIONS, retentionMs: retentionMsOf(config.FILE_REVISION_DAYS), maxTreeEntries: config.MAX_TREE_ENTRIES, maxFiles: config.MAX_FILES };
    const rawIndex = new RedisFileIndex({ redis, keys, outbox: ctx.events.outbox, ...settings });
    const index = withUnavailableErrors(rawIndex, 'Redis');
    await migrateOldLayout({ redis, index: rawIndex, blobs, logger });
    const cursors = new Cursors(await rawIndex.cursorKey());
    const log = new RedisChangesLog({ redis, keys, maxWaiting: config.CHANGES_MAX_WAITERS });
    ctx.onStop('changes log', () => log.close());
    const workspace = new Workspace({ index, blobs, cursors, maxReadBytes: config.MAX_READ_BYTES });
    const partSize = partSizeFor(config.MAX_UPLOAD_BYTES, config.S3_PART_SIZE);
    const uploads = new Uploads({ index, blobs, logger, maxUploadBytes: config.MAX_UPLOAD_BYTES, partSize, pendingMs: config.UPLOAD_PENDING_MS, quotaBytes: config.FILE_QUOTA_BYTES, summaryMaxBytes: config.SEARCH_MAX_FILE_BYTES });
    const knowledge = new Knowledge({ index });
    const changes = new Changes({ log: withUnavailableErrors(log, 'Redis'), cursors });
    const removedObjects = metrics.counter('files_objects_reclaimed_total', 'Objects deleted by the sweeper (unreferenced bytes, expired uploads)', []);
    ctx.background('sweeper', new Sweeper({ redis, index: rawIndex, blobs, logger, intervalMs: config.FILE_SWEEP_INTERVAL_MS, graceMs: config.FILE_GC_GRACE_MS, retentionMs: retentionMsOf(config.FILE_REVISION_DAYS), onRemoved: (n) => removedObjects.inc({}, n) }));
    ctx.consume(
      {
        'agent.deleted': async ({ data }) => {
          const removed = await knowledge.removeAgent(data.userId, data.agentId);
          logger.info({ agentId: data.agentId, removed }, 'knowledge pins removed');
        },
      },
      consumerGroup(s3.bucket),
    );
    const checkpointIndex = new RedisCheckpointIndex({ redis, keys, outbox: ctx.events.outbox, ...settings });
    const checkpoints = new Checkpoints({ index: withUnavailableErrors(checkpointIndex, 'Redis'), maxCheckpoints: config.MAX_CHECKPOINTS, retentionMs: retentionMsOf(config.FILE_REVISION_DAYS) });
    const transfer = new KnowledgeTransfer({ index: withUnavailableErrors(rawIndex, 'Redis'), uploads, blobs, pendingMs: config.UPLOAD_PENDING_MS });
    const summaries = withUnavailableErrors(new RedisContentSummaries({ redis, keys }), 'Redis');
    const matcher = new MatchPool({ size: config.SEARCH_WORKERS, logger });
    ctx.onStop('search workers', () => matcher.close());
    const search = new Search({ index, blobs, summaries, cursors, logger, matcher, budgetMs: config.SEARCH_BUDGET_MS, maxFileBytes: config.SEARCH_MAX_FILE_BYTES, concurrency: config.SEARCH_READ_CONCURRENCY });
    ctx.serve(FilesServiceService, { ...filesHandlers({ workspace, uploads, knowledge, changes, blobs, search, revisions: new Revisions({ index }), checkpoints }), ...knowledgeTransferHandlers(transfer) });
  },
});
