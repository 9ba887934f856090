import { EventConsumer, JetStreamPublisher, OutboxRelay, RedisOutbox } from '@workspace/events';
import { GrpcServer, HealthReporter, type Logger, type Metrics, type RedisClient } from '@workspace/platform';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { OutboxFileEvents } from './adapters/file-events.outbox.js';
import { RedisLock } from './adapters/lock.redis.js';
import { createS3Client, ensureBucket, ensureTempExpiry, MinioObjectStore, type S3Settings } from './adapters/object-store.minio.js';
import { partSizeFor } from './adapters/part-writer.js';
import { RedisRemovedAgents } from './adapters/removed-agents.redis.js';
import { Knowledge } from './domain/knowledge.js';
import { Uploads } from './domain/uploads.js';
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
  /**
   * NATS with JetStream: file events are relayed there from the outbox, and agent.deleted
   * removes knowledge copies. Neither waits for NATS: events wait in the outbox meanwhile.
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
 * The consumer group of the files services that share `bucket`: knowledge copies live in the
 * bucket, so each event must be handled once per bucket, not once per NATS. Replicas of one
 * deployment share it; deployments (or test stacks) on other buckets get their own durables.
 */
export function consumerGroup(bucket: string): string {
  return `files-${bucket.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** Wires the files service, creates the bucket if missing, and starts serving. */
export async function startFilesService(options: FilesServiceOptions) {
  const { logger, s3 } = options;
  const client = createS3Client(s3);
  await ensureBucket(client, s3.bucket, s3.region);
  await ensureTempExpiry(client, s3.bucket, logger);
  const s3Bytes = options.metrics?.counter('s3_bytes_total', 'Bytes sent to (in) and read from (out) S3', ['direction']);
  const store = new MinioObjectStore({
    client,
    bucket: s3.bucket,
    partSize: partSizeFor(options.maxUploadBytes, options.partSize),
    onBytes: (direction, bytes) => s3Bytes?.inc({ direction }, bytes),
  });
  const lock = new RedisLock(options.redis, logger);
  const stream = { replicas: options.streamReplicas ?? 1 };
  const publisher = new JetStreamPublisher({ url: options.natsUrl, logger, name: 'files', stream });
  const outbox = new RedisOutbox({ redis: options.redis, namespace: options.outboxNamespace ?? 'files' });
  const relay = new OutboxRelay({ outbox, publisher, logger });
  const events = new OutboxFileEvents({ redis: options.redis, outbox, logger, onEvents: (tag) => relay.kick(tag) });
  const workspace = new Workspace({ store, lock, events, maxReadBytes: options.maxReadBytes });
  const uploads = new Uploads({ store, lock, events, maxUploadBytes: options.maxUploadBytes, logger });
  const knowledge = new Knowledge({ store, lock, removed: new RedisRemovedAgents(options.redis) });
  const grpc = new GrpcServer(logger, { observe: options.metrics?.grpcObserver() }).add(FilesServiceService, filesHandlers({ workspace, uploads, knowledge, store, logger }));
  const consumer = new EventConsumer({
    url: options.natsUrl,
    logger,
    service: consumerGroup(s3.bucket),
    stream,
    handlers: {
      'agent.deleted': async ({ data }) => {
        const removed = await knowledge.removeAgent(data.userId, data.agentId);
        logger.info({ agentId: data.agentId, removed }, 'knowledge copies removed');
      },
    },
  });
  const health = new HealthReporter({
    logger,
    probe: async () => {
      await options.redis.ping();
      if (!(await client.bucketExists(s3.bucket))) throw new Error(`bucket ${s3.bucket} is gone`);
    },
  });
  health.addTo(grpc.server);
  const port = await grpc.listen(options.host, options.port);
  await health.start();
  void consumer.start();
  relay.start();
  options.metrics?.sampled('outbox_pending_events', 'Events written but not yet published to NATS', 'service', async () => ({ files: await outbox.depth() }));
  options.metrics?.sampled('nats_consumer_pending', 'Events not yet handled (pending + unacknowledged), by durable consumer', 'durable', () => consumer.pending());
  return {
    port,
    /** Readiness off, drain in-flight calls, stop consuming and relaying; the caller closes the clients it gave. */
    stop: async (graceMs: number) => {
      health.stop();
      await grpc.drain(graceMs);
      await consumer.stop();
      await relay.stop();
      await publisher.close();
    },
  };
}
