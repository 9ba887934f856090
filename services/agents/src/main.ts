import { JetStreamPublisher } from '@workspace/events';
import { createClient, createLogger, createRedis, loadConfigOrExit, Metrics, onShutdown } from '@workspace/platform';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import { GrpcKnowledgeStore } from './adapters/knowledge.grpc.js';
import { GrpcProjectDirectory } from './adapters/projects.grpc.js';
import { configSchema } from './config.js';
import { startAgentsService } from './service.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger('agents', config.LOG_LEVEL);
const redis = createRedis({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER, name: 'agents' });
const projects = createClient(ProjectsServiceService, {
  serviceName: 'projects',
  address: config.PROJECTS_ADDR,
  deadlineMs: config.GRPC_DEADLINE_MS,
  // A lookup is safe to repeat on another replica when the first one is going away.
  idempotent: ['getProject'],
});
const files = createClient(FilesServiceService, {
  serviceName: 'files',
  address: config.FILES_ADDR,
  deadlineMs: config.GRPC_DEADLINE_MS,
  // Pinning is content-addressed: a repeat copies nothing new and answers the same.
  idempotent: ['pinKnowledge'],
});
const publisher = new JetStreamPublisher({ url: config.NATS_URL, logger, name: 'agents', stream: { replicas: config.NATS_STREAM_REPLICAS } });
const metrics = new Metrics('agents');
const service = await startAgentsService({
  redis,
  logger,
  host: config.GRPC_HOST,
  port: config.GRPC_PORT,
  projects: new GrpcProjectDirectory(projects),
  knowledge: new GrpcKnowledgeStore(files, { deadlineMs: config.KNOWLEDGE_DEADLINE_MS }),
  publisher,
  retention: config.CONFIG_RETENTION,
  txConnections: config.REDIS_TX_CONNECTIONS,
  outboxPollMs: config.OUTBOX_POLL_MS,
  metrics,
});
const metricsServer = await metrics.serve(config.GRPC_HOST, config.METRICS_PORT);
logger.info({ port: service.port, metricsPort: metricsServer.port }, 'listening');

onShutdown(logger, [
  { name: 'grpc', run: () => service.stop(config.SHUTDOWN_GRACE_MS) },
  { name: 'nats', run: () => publisher.close() },
  { name: 'projects', run: () => projects.close() },
  { name: 'files', run: () => files.close() },
  { name: 'redis', run: () => redis.quit() },
  { name: 'metrics', run: () => metricsServer.close() },
]);
