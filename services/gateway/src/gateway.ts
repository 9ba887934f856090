import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, createHealthChecker, createRedis, type Logger, type Metrics } from '@workspace/platform';
import { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { AutomationsServiceService } from '@workspace/proto/workspace/automations/v1/automations';
import { WebhooksServiceService } from '@workspace/proto/workspace/webhooks/v1/webhooks';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { createApp } from './app.js';

import { createVerifier, type AuthOptions } from './edge/auth.js';
import { answerClientError } from './edge/client-error.js';
import { ObjectStore } from './transfer/object-store.js';
import { IdempotencyStore } from './edge/limits/idempotency-store.js';
import { RateLimiter } from './edge/limits/rate-limit.js';
import { UserSlots } from './edge/limits/user-slots.js';
import { LinkSigner, type LinkKey } from './features/links/link-signer.js';
import type { Clients } from './clients.js';

export interface GatewayOptions {
  logger: Logger;
  host: string;
  port: number;
  auth: AuthOptions;
  /** `automations` and `webhooks` are optional: without them their routes are not served. */
  addresses: { projects: string; files: string; agents: string; automations?: string | undefined; webhooks?: string | undefined };
  deadlineMs: number;
  /** An upload body that sends nothing for this long fails; default 30 s (docs/api/files.md#upload). */
  uploadIdleTimeoutMs?: number;
  trustProxy?: boolean;
  metrics?: Metrics;
  /** The Redis every replica shares for rate limits, upload slots and idempotency records. */
  redis: { url: string; cluster: boolean };
  /** docs/api/conventions.md#rate-limits: RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST, MAX_CONCURRENT_UPLOADS, MAX_SEARCHES_PER_USER. */
  limits: { perSecond: number; burst: number; maxConcurrentUploads: number; maxSearches: number };
  /** LINK_SIGNING_KEYS (first signs, all verify) and PUBLIC_URL; no keys: a random one per process. */
  links?: { keys: LinkKey[]; publicUrl?: string | undefined };
  /** TUS_UPLOAD_EXPIRY_MS: how long an unfinished resumable upload lives; default 24 h. */
  tusUploadExpiryMs?: number;
  /** MAX_UPLOAD_BYTES, as tus announces it (Tus-Max-Size); default 5 GiB. The files service enforces it. */
  maxUploadBytes?: number;
  /** CORS_ORIGINS: browser origins allowed to call the API. */
  corsOrigins?: readonly string[];
  /** MCP_AUTHORIZATION_SERVERS (else AUTH_ISSUER): named by the MCP endpoint's protected-resource metadata. */
  mcpAuthorizationServers?: readonly string[];
  /** MCP_STREAM_STALL_MS: an MCP GET stream whose socket takes nothing for this long is closed; default 30 s. */
  mcpStreamStallMs?: number;
}

const READY_TIMEOUT_MS = 1_000;
const UPLOAD_IDLE_TIMEOUT_MS = 30_000;

/** Wires clients and the app, listens; `stop` drains in-flight requests, then closes clients. */
export async function startGateway(options: GatewayOptions) {
  // Reads (and idempotent writes) are retried on UNAVAILABLE, e.g. when a replica is draining.
  const client = <S extends ServiceDefinition>(definition: S, name: Exclude<keyof GatewayOptions['addresses'], 'automations' | 'webhooks'>, idempotent: readonly Extract<keyof S, string>[]) =>
    createClient(definition, { serviceName: name, address: options.addresses[name], deadlineMs: options.deadlineMs, idempotent });
  const clients = {
    projects: client(ProjectsServiceService, 'projects', ['ensureHome', 'listProjects', 'getProject']),
    agents: client(AgentsServiceService, 'agents', ['getAgent', 'listAgents', 'listVersions', 'listChats', 'getChat']),
    files: client(FilesServiceService, 'files', ['listFiles', 'statFile', 'readFile', 'openDownload', 'getChangesCursor', 'getChanges', 'listExport', 'listRevisions', 'listTrash']),
    ...(options.addresses.automations && {
      automations: createClient(AutomationsServiceService, {
        serviceName: 'automations',
        address: options.addresses.automations,
        deadlineMs: options.deadlineMs,
        idempotent: ['listSchedules', 'listTriggers', 'summarizeSchedules'],
      }),
    }),
    ...(options.addresses.webhooks && {
      webhooks: createClient(WebhooksServiceService, {
        serviceName: 'webhooks',
        address: options.addresses.webhooks,
        deadlineMs: options.deadlineMs,
        idempotent: ['listWebhooks', 'getWebhook', 'listDeliveries'],
      }),
    }),
  } satisfies Clients;
  const s3Bytes = options.metrics?.counter('s3_bytes_total', 'File bytes sent to (in) and read from (out) the object store', ['direction']);
  const store = new ObjectStore({ onBytes: (direction, bytes) => s3Bytes?.inc({ direction }, bytes) });
  const redis = createRedis({ url: options.redis.url, cluster: options.redis.cluster, name: 'gateway' });
  // Failures surface (as 503) on the requests that meet them; say so once per outage, not per retry.
  let redisDown = false;
  redis.on('error', (err: Error) => {
    if (!redisDown) options.logger.warn({ err: err.message }, 'redis is unreachable; limited routes answer 503 until it is back');
    redisDown = true;
  });
  redis.on('ready', () => {
    redisDown = false;
  });
  const limits = {
    rate: new RateLimiter({ redis, perSecond: options.limits.perSecond, burst: options.limits.burst }),
    uploads: new UserSlots({ redis, logger: options.logger, kind: 'uploads', max: options.limits.maxConcurrentUploads }),
    searches: new UserSlots({ redis, logger: options.logger, kind: 'searches', max: options.limits.maxSearches }),
    idempotency: new IdempotencyStore(redis),
  };
  if (!options.links?.keys.length) options.logger.warn('LINK_SIGNING_KEYS is not set: temporary links are signed with a random key and work only on this replica until it restarts');
  const signer = options.links?.keys.length ? new LinkSigner(options.links.keys) : LinkSigner.ephemeral();
  const health = Object.values(options.addresses).flatMap((address) => (address ? [createHealthChecker(address)] : []));
  const { app, markShuttingDown } = createApp({
    logger: options.logger,
    verify: createVerifier({ logger: options.logger, ...options.auth }),
    clients,
    store,
    uploadIdleTimeoutMs: options.uploadIdleTimeoutMs ?? UPLOAD_IDLE_TIMEOUT_MS,
    ready: async () => (await Promise.all(health.map((h) => h.check(READY_TIMEOUT_MS)))).every(Boolean),
    trustProxy: options.trustProxy ?? false,
    ...(options.metrics && { metrics: options.metrics }),
    limits,
    ...(options.corsOrigins && { corsOrigins: options.corsOrigins }),
    links: { signer, publicUrl: options.links?.publicUrl },
    mcp: {
      redis,
      authorizationServers: options.mcpAuthorizationServers?.length ? options.mcpAuthorizationServers : options.auth.issuer ? [options.auth.issuer] : [],
      streamStallMs: options.mcpStreamStallMs,
    },
    tus: { redis, expiryMs: options.tusUploadExpiryMs ?? 24 * 3600_000, maxBytes: options.maxUploadBytes ?? 5 * 1024 ** 3 },
  });
  const server: Server = createServer({ requestTimeout: 0, headersTimeout: 30_000, keepAliveTimeout: 65_000 }, app);
  server.on('clientError', answerClientError(options.logger));
  // An `Expect` other than 100-continue: Node would answer a bare 417 itself; serve the request
  // as if the header were absent (RFC 9110 lets a server ignore an expectation it does not know).
  server.on('checkExpectation', app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    markShuttingDown,
    stop: async (graceMs: number) => {
      markShuttingDown();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.closeAllConnections();
          resolve();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      for (const c of Object.values(clients)) c.close();
      store.close();
      await redis.quit().catch(() => redis.disconnect());
      for (const h of health) h.close();
    },
  };
}
