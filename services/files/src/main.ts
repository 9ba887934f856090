import { createLogger, createRedis, initTracing, loadConfigOrExit, Metrics, onShutdown } from '@workspace/platform';
import { configSchema } from './config.js';
import { startFilesService } from './service.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger('files', config.LOG_LEVEL);
const tracing = initTracing({ service: 'files', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const metrics = new Metrics('files');
const redis = createRedis({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER, name: 'files' });
const service = await startFilesService({
  s3: {
    endpoint: config.S3_ENDPOINT,
    accessKey: config.S3_ACCESS_KEY,
    secretKey: config.S3_SECRET_KEY,
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
  },
  redis,
  logger,
  host: config.GRPC_HOST,
  port: config.GRPC_PORT,
  maxUploadBytes: config.MAX_UPLOAD_BYTES,
  maxReadBytes: config.MAX_READ_BYTES,
  partSize: config.S3_PART_SIZE,
  uploadPendingMs: config.UPLOAD_PENDING_MS,
  gcGraceMs: config.FILE_GC_GRACE_MS,
  sweepIntervalMs: config.FILE_SWEEP_INTERVAL_MS,
  changesMaxWaiters: config.CHANGES_MAX_WAITERS,
  natsUrl: config.NATS_URL,
  streamReplicas: config.NATS_STREAM_REPLICAS,
  metrics,
});
const metricsServer = await metrics.serve(config.GRPC_HOST, config.METRICS_PORT);
logger.info({ port: service.port, metricsPort: metricsServer.port }, 'listening');

onShutdown(logger, [
  { name: 'grpc', run: () => service.stop(config.SHUTDOWN_GRACE_MS) },
  { name: 'redis', run: () => redis.quit() },
  { name: 'metrics', run: () => metricsServer.close() },
  { name: 'tracing', run: () => tracing.shutdown() },
]);
