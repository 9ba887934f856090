import { EventConsumer, JetStreamPublisher, OutboxRelay, RedisOutbox } from '@workspace/events';
import { GrpcServer, HealthReporter, withUnavailableErrors, type Logger, type Metrics, type RedisClient } from '@workspace/platform';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { createS3Client, ensureAbortRule, ensureBucket, MinioBlobStore, type S3Settings } from './adapters/blobs.minio.js';
import { RedisChangesLog } from './adapters/changes.redis.js';
import { IndexKeys, RedisFileIndex } from './adapters/index.redis.js';
import { migrateOldLayout } from './adapters/migration.js';
import { assertDurableRedis } from './adapters/redis-policy.js';
import { Sweeper } from './adapters/sweeper.js';
import { Changes } from './domain/changes.js';
import { Cursors } from './domain/cursors.js';
import { Knowledge } from './domain/knowledge.js';
import { MAX_PARTS, Uploads } from './domain/uploads.js';
import { Workspace } from './domain/workspace.js';
import { filesHandlers } from './grpc/files.handlers.js';

export interface FilesServiceOptions {
  s3: S3Settings;
  redis: RedisClient;
  logger: Logger;
  host: string;
  port: number;
  maxUploadBytes: number;
  maxReadBytes: number;
  /** Preferred multipart part size; raised when needed to fit maxUploadBytes in 10,000 parts. */
  partSize: number;
  uploadPendingMs: number;
  gcGraceMs: number;
  sweepIntervalMs: number;
  changesMaxWaiters: number;
  /**
   * NATS with JetStream: file events are relayed there from the outbox, and agent.deleted
   * removes knowledge pins. Neither waits for NATS: events wait in the outbox meanwhile.
   */
  natsUrl: string;
  /** Replicas of the event stream if this service creates it. */
  streamReplicas?: number;
  /** Keeps this service's outbox apart from others on the same Redis (default `files`). */
  outboxNamespace?: string;
  /** When given, every call is counted and timed. */
  metrics?: Metrics;
}

/**
 * The consumer group of the files services that share `bucket`: the index of a bucket lives
 * under its name, so each event must be handled once per bucket, not once per NATS. Replicas
 * of one deployment share it; deployments (or test stacks) on other buckets get their own.
 */
export function consumerGroup(bucket: string): string {
  return `files-${bucket.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The smallest part size, in whole MiB and at least `preferred`, that fits `maxBytes` in 10,000 parts. */
export function partSizeFor(maxBytes: number, preferred: number): number {
  const mib = 1024 * 1024;
  return Math.max(5 * mib, preferred, Math.ceil(maxBytes / MAX_PARTS / mib) * mib);
}

/** Wires the files service, creates the bucket if missing, imports an old layout, and starts serving. */
export async function startFilesService(options: FilesServiceOptions) {
  const { logger, s3, redis } = options;
  await assertDurableRedis(redis, logger);
  const client = createS3Client(s3);
  await ensureBucket(client, s3.bucket, s3.region);
  await ensureAbortRule(client, s3.bucket, logger);
  const blobs = new MinioBlobStore({ client, bucket: s3.bucket });
  const keys = new IndexKeys(s3.bucket);
  const outbox = new RedisOutbox({ redis, namespace: options.outboxNamespace ?? 'files' });
  const rawIndex = new RedisFileIndex({ redis, keys, outbox });
  const index = withUnavailableErrors(rawIndex, 'Redis');
  await migrateOldLayout({ redis, index: rawIndex, blobs, logger });
  const cursors = new Cursors(await rawIndex.cursorKey());
  const log = new RedisChangesLog({ redis, keys, maxWaiting: options.changesMaxWaiters });
  const workspace = new Workspace({ index, blobs, cursors, maxReadBytes: options.maxReadBytes });
  const partSize = partSizeFor(options.maxUploadBytes, options.partSize);
  const uploads = new Uploads({ index, blobs, logger, maxUploadBytes: options.maxUploadBytes, partSize, pendingMs: options.uploadPendingMs });
  const knowledge = new Knowledge({ index });
  const changes = new Changes({ log: withUnavailableErrors(log, 'Redis'), cursors });
  const removedObjects = options.metrics?.counter('files_objects_reclaimed_total', 'Objects deleted by the sweeper (unreferenced bytes, expired uploads)', []);
  const sweeper = new Sweeper({ redis, index: rawIndex, blobs, logger, intervalMs: options.sweepIntervalMs, graceMs: options.gcGraceMs, onRemoved: (n) => removedObjects?.inc({}, n) });

  const stream = { replicas: options.streamReplicas ?? 1 };
  const publisher = new JetStreamPublisher({ url: options.natsUrl, logger, name: 'files', stream });
  const relay = new OutboxRelay({ outbox, publisher, logger });
  const grpc = new GrpcServer(logger, { observe: options.metrics?.grpcObserver() }).add(FilesServiceService, filesHandlers({ workspace, uploads, knowledge, changes, blobs }));
  const consumer = new EventConsumer({
    url: options.natsUrl,
    logger,
    service: consumerGroup(s3.bucket),
    stream,
    handlers: {
      'agent.deleted': async ({ data }) => {
        const removed = await knowledge.removeAgent(data.userId, data.agentId);
        logger.info({ agentId: data.agentId, removed }, 'knowledge pins removed');
      },
    },
  });
  const health = new HealthReporter({
    logger,
    probe: async () => {
      await redis.ping();
      if (!(await client.bucketExists(s3.bucket))) throw new Error(`bucket ${s3.bucket} is gone`);
    },
  });
  health.addTo(grpc.server);
  const port = await grpc.listen(options.host, options.port);
  await health.start();
  void consumer.start();
  relay.start();
  sweeper.start();
  options.metrics?.sampled('outbox_pending_events', 'Events written but not yet published to NATS', 'service', async () => ({ files: await outbox.depth() }));
  options.metrics?.sampled('nats_consumer_pending', 'Events not yet handled (pending + unacknowledged), by durable consumer', 'durable', () => consumer.pending());
  return {
    port,
    /** Readiness off, drain in-flight calls, stop consuming, relaying and sweeping; the caller closes the clients it gave. */
    stop: async (graceMs: number) => {
      health.stop();
      await grpc.drain(graceMs);
      await sweeper.stop();
      log.close();
      await consumer.stop();
      await relay.stop();
      await publisher.close();
    },
  };
}
