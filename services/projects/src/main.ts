import { createClient, createLogger, createRedis, initTracing, loadConfigOrExit, Metrics, onShutdown } from '@workspace/platform';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { GrpcWorkspaceFiles } from './adapters/workspace-files.grpc.js';
import { configSchema } from './config.js';
import { startProjectsService } from './service.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger('projects', config.LOG_LEVEL);
const tracing = initTracing({ service: 'projects', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const redis = createRedis({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER, name: 'projects' });
const metrics = new Metrics('projects');
const filesClient = createClient(FilesServiceService, { serviceName: 'files', address: config.FILES_ADDR, deadlineMs: config.GRPC_DEADLINE_MS });
const files = new GrpcWorkspaceFiles(filesClient);
const service = await startProjectsService({ redis, files, logger, host: config.GRPC_HOST, port: config.GRPC_PORT, metrics, natsUrl: config.NATS_URL, streamReplicas: config.NATS_STREAM_REPLICAS });
const metricsServer = await metrics.serve(config.GRPC_HOST, config.METRICS_PORT);
logger.info({ port: service.port, metricsPort: metricsServer.port }, 'listening');

onShutdown(logger, [
  { name: 'grpc', run: () => service.stop(config.SHUTDOWN_GRACE_MS) },
  { name: 'redis', run: () => redis.quit() },
  { name: 'files client', run: () => filesClient.close() },
  { name: 'metrics', run: () => metricsServer.close() },
  { name: 'tracing', run: () => tracing.shutdown() },
]);
