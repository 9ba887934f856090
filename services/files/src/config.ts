import { env } from '@workspace/platform';
import { z } from 'zod';

const MiB = 1024 * 1024;

export const configSchema = z.object({
  GRPC_HOST: z.string().default('0.0.0.0'),
  GRPC_PORT: env.port(50052),
  METRICS_PORT: env.port(9466),
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
  /** Long polls of the changes feed waiting at once per replica; more answer at once. */
  CHANGES_MAX_WAITERS: env.positiveInt(512),
  /** The metadata index (it must not evict: the service refuses an evicting Redis). */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER: env.bool(false),
  /** NATS with JetStream: file events are relayed there; agent.deleted removes knowledge copies. */
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  /** Replicas of the event stream when this service creates it (3 on a NATS cluster). */
  NATS_STREAM_REPLICAS: env.positiveInt(1),
  LOG_LEVEL: env.logLevel(),
  OTEL_EXPORTER_OTLP_ENDPOINT: env.otlpEndpoint(),
  SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
});

export type FilesConfig = z.output<typeof configSchema>;
