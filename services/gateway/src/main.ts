import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, initTracing, loadConfigOrExit, Metrics, onShutdown } from '@workspace/platform';
import { configSchema } from './config.js';
import { startGateway } from './gateway.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger('gateway', config.LOG_LEVEL);
const tracing = await initTracing({ service: 'gateway', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const metrics = new Metrics('gateway');
const gateway = await startGateway({
  logger,
  metrics,
  host: config.HOST,
  port: config.PORT,
  auth: {
    jwksUrl: config.AUTH_JWKS_URL,
    jwksMaxAgeMs: config.AUTH_JWKS_CACHE_MAX_AGE_MS,
    jwksCooldownMs: config.AUTH_JWKS_COOLDOWN_MS,
    publicKeyPem: config.AUTH_PUBLIC_KEY,
    secret: config.AUTH_JWT_SECRET,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
  },
  addresses: { projects: config.PROJECTS_ADDR, files: config.FILES_ADDR, agents: config.AGENTS_ADDR, automations: config.AUTOMATIONS_ADDR, webhooks: config.WEBHOOKS_ADDR },
  deadlineMs: config.GRPC_DEADLINE_MS,
  uploadIdleTimeoutMs: config.UPLOAD_IDLE_TIMEOUT_MS,
  trustProxy: config.TRUST_PROXY,
  redis: { url: config.REDIS_URL, cluster: config.REDIS_CLUSTER },
  corsOrigins: config.CORS_ORIGINS,
  mcpAuthorizationServers: config.MCP_AUTHORIZATION_SERVERS,
  mcpStreamStallMs: config.MCP_STREAM_STALL_MS,
  tusUploadExpiryMs: config.TUS_UPLOAD_EXPIRY_MS,
  maxUploadBytes: config.MAX_UPLOAD_BYTES,
  links: { keys: config.LINK_SIGNING_KEYS, publicUrl: config.PUBLIC_URL },
  limits: { perSecond: config.RATE_LIMIT_PER_SECOND, burst: config.RATE_LIMIT_BURST, maxConcurrentUploads: config.MAX_CONCURRENT_UPLOADS, maxSearches: config.MAX_SEARCHES_PER_USER },
});
const metricsServer = await metrics.serve(config.HOST, config.METRICS_PORT);
logger.info({ port: gateway.port, metricsPort: metricsServer.port }, 'listening');

onShutdown(logger, [
  { name: 'readiness', run: () => gateway.markShuttingDown() },
  { name: 'delay', run: () => sleep(config.SHUTDOWN_DELAY_MS) },
  { name: 'http', run: () => gateway.stop(config.SHUTDOWN_GRACE_MS) },
  { name: 'metrics', run: () => metricsServer.close() },
  { name: 'tracing', run: () => tracing.shutdown() },
]);
