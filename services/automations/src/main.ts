import { createClient, createLogger, createRedis, initTracing, loadConfigOrExit, Metrics, onShutdown } from '@workspace/platform';
import { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { GrpcAgentDirectory } from './adapters/agents.grpc.js';
import { configSchema } from './config.js';
import { startAutomationsService } from './service.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger('automations', config.LOG_LEVEL);
const tracing = initTracing({ service: 'automations', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const redis = createRedis({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER, name: 'automations' });
const agentsClient = createClient(AgentsServiceService, {
  serviceName: 'agents',
  address: config.AGENTS_ADDR,
  deadlineMs: config.GRPC_DEADLINE_MS,
  // A lookup is safe to repeat on another replica; CreateChat is not (it would start two chats).
  idempotent: ['getAgent'],
});
const metrics = new Metrics('automations');
const service = await startAutomationsService({
  redis,
  logger,
  host: config.GRPC_HOST,
  port: config.GRPC_PORT,
  agents: new GrpcAgentDirectory(agentsClient),
  natsUrl: config.NATS_URL,
  tickMs: config.SCHEDULER_TICK_MS,
  secretKey: config.TRIGGER_SECRET_KEY,
  metrics,
});
const metricsServer = await metrics.serve(config.GRPC_HOST, config.METRICS_PORT);
logger.info({ port: service.port, metricsPort: metricsServer.port }, 'listening');

onShutdown(logger, [
  { name: 'grpc', run: () => service.stop(config.SHUTDOWN_GRACE_MS) },
  { name: 'agents client', run: () => agentsClient.close() },
  { name: 'redis', run: () => redis.quit() },
  { name: 'metrics', run: () => metricsServer.close() },
  { name: 'tracing', run: () => tracing.shutdown() },
]);
