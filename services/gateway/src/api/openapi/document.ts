import { createLogger, type RedisClient } from '@workspace/platform';
import type { ObjectStore } from '../../transfer/object-store.js';
import { buildRoutes } from '../registry.js';
import { buildOpenApi, type ApiInfo } from './openapi.js';
import type { Clients } from '../../clients.js';

export const API_INFO: ApiInfo = {
  title: 'Workspace API',
  version: '1.0.0',
  description:
    'Projects, files and Agents with immutable, versioned configurations. Errors use one envelope: `{error: {code, message, requestId, details?}}`. ' +
    'Request bodies: JSON at most 1 MiB (413 beyond), uploads at most MAX_UPLOAD_BYTES (default 5 GiB), webhook payloads at most 1 MiB.',
  license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
};

/**
 * The OpenAPI document of every route, built from the route definitions alone: no service is
 * reached (the handlers never run), so the SDK's build and the lint test make it offline.
 */
export function openApiDocument(): Record<string, unknown> {
  const clients = { projects: {}, agents: {}, files: {}, automations: {}, webhooks: {} } as unknown as Clients;
  // tus's routes need a Redis only when they serve: the document never reaches it.
  const tus = { redis: {} as RedisClient, expiryMs: 24 * 3_600_000, maxBytes: 5 * 1024 ** 3 };
  const routes = buildRoutes(clients, { store: {} as ObjectStore, logger: createLogger('openapi', 'silent'), uploadIdleTimeoutMs: 1_000, tus });
  return buildOpenApi(routes, API_INFO);
}
