import { createLogger } from '@workspace/platform';
import { describe, expect, it } from 'vitest';
import { buildRoutes } from '../registry.js';
import type { ObjectStore } from '../../transfer/object-store.js';
import { buildOpenApi } from './openapi.js';
import type { Clients } from '../../clients.js';

type Operation = { operationId: string; security: unknown[]; parameters?: { name: string; in: string }[]; responses: Record<string, { description: string; headers?: Record<string, { $ref?: string }> }> };

// Handlers are never called here: the document comes from the route definitions alone.
const clients = { projects: {}, agents: {}, files: {}, automations: {}, webhooks: {} } as unknown as Clients;
const routes = buildRoutes(clients, { store: {} as ObjectStore, logger: createLogger('test', 'silent'), uploadIdleTimeoutMs: 1_000 });
const doc = buildOpenApi(routes, { title: 't', version: '1', description: 'd' }) as { paths: Record<string, Record<string, Operation>>; components: { headers: Record<string, unknown> } };
const operations = Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod));
const byId = (id: string) => operations.find((o) => o.operationId === id)!;

describe('openapi — limits', () => {
  it('openapi — every rate-limited operation documents 429 with Retry-After, and the RateLimit-* headers on its answers (not on 401)', () => {
    expect(Object.keys(doc.components.headers).sort()).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
    const limited = operations.filter((o) => o.security.length > 0 || o.operationId === 'fireTrigger');
    expect(limited.length).toBeGreaterThan(20);
    for (const op of limited) {
      expect(op.responses['429']?.headers?.['Retry-After']?.$ref, op.operationId).toBe('#/components/headers/Retry-After');
      for (const [status, response] of Object.entries(op.responses)) {
        const refs = Object.keys(response.headers ?? {}).filter((h) => h.startsWith('RateLimit-'));
        expect(refs, `${op.operationId} ${status}`).toHaveLength(status === '401' ? 0 : 3);
      }
    }
    expect(byId('uploadFile').responses['429']!.description).toContain('RATE_LIMITED');
  });

  it('openapi — creating POSTs declare Idempotency-Key and 422 IDEMPOTENCY_KEY_REUSED; others do not', () => {
    const idempotent = ['createProject', 'createAgent', 'createChat', 'createSchedule', 'createTrigger', 'copyFile', 'createWebhook', 'importAgent', 'createCheckpoint'];
    for (const op of operations) {
      const declares = (op.parameters ?? []).some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
      expect(declares, op.operationId).toBe(idempotent.includes(op.operationId));
      if (declares) expect(op.responses['422']!.description, op.operationId).toContain('IDEMPOTENCY_KEY_REUSED');
    }
  });

  it('openapi — the count quotas are documented as 403 QUOTA_EXCEEDED where they apply', () => {
    for (const id of ['createAgent', 'createSchedule', 'createTrigger', 'createWebhook', 'putAlias', 'importAgent']) expect(byId(id).responses['403']!.description, id).toContain('QUOTA_EXCEEDED');
    expect(byId('getAgent').responses['403']).toBeUndefined();
  });
});
