import { createLogger } from '@workspace/platform';
import { describe, expect, it } from 'vitest';
import type { ObjectStore } from '../../transfer/object-store.js';
import { buildRoutes } from '../registry.js';
import { openApiDocument } from './document.js';
import type { Clients } from '../../clients.js';

interface Parameter {
  name?: string;
  in?: string;
  required?: boolean;
  example?: unknown;
  schema?: { type?: string; pattern?: string; enum?: unknown[] };
  $ref?: string;
}
interface Content {
  example?: unknown;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { description?: string; content: Record<string, Content> };
  responses: Record<string, { content?: Record<string, Content> }>;
}

const doc = openApiDocument() as { paths: Record<string, Record<string, Operation>> };
const operations = Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod));
const byId = (id: string) => operations.find((o) => o.operationId === id)!;
const routes = buildRoutes({ projects: {}, agents: {}, files: {}, automations: {} } as unknown as Clients, { store: {} as ObjectStore, logger: createLogger('test', 'silent'), uploadIdleTimeoutMs: 1_000 });

/** What an operation is missing of its example: required parameters, the body, the success answer. */
function missingExamples(op: Operation): string[] {
  const missing: string[] = [];
  for (const p of op.parameters ?? []) if (!p.$ref && (p.in === 'path' || p.required) && p.example === undefined) missing.push(`${p.in} ${p.name}`);
  for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) if (content.example === undefined) missing.push(`body ${type}`);
  const success = Object.entries(op.responses).find(([status, r]) => status.startsWith('2') && r.content?.['application/json']);
  if (success && success[1].content!['application/json']!.example === undefined) missing.push(`response ${success[0]}`);
  const some = (op.parameters ?? []).some((p) => p.example !== undefined) || op.requestBody !== undefined || success !== undefined;
  if (!some) missing.push('any example');
  return missing;
}

describe('openapi — examples', () => {
  it('openapi — every operation has an example: its path and required parameters, its request body and its success answer', () => {
    expect(operations.length).toBeGreaterThan(30);
    const missing = operations.flatMap((op) => missingExamples(op).map((m) => `${op.operationId}: ${m}`));
    expect(missing, 'give each route an `example` (route.ts: RouteExample)').toEqual([]);
  });

  it('openapi — the rule catches an operation without one', () => {
    const op = structuredClone(byId('createAgent'));
    delete op.requestBody!.content['application/json']!.example;
    expect(missingExamples(op)).toEqual(['body application/json']);
  });

  it('openapi — every example is accepted by the schemas that validate requests (query values as they travel: text)', () => {
    for (const route of routes) {
      const ex = route.example ?? {};
      const label = route.operationId;
      if (ex.params !== undefined) expect(route.params?.safeParse(ex.params).success, `${label} params`).toBe(true);
      if (ex.query !== undefined) {
        const wire = Object.fromEntries(Object.entries(ex.query as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
        expect(route.query?.safeParse(wire).error, `${label} query`).toBeUndefined();
      }
      if (ex.body !== undefined) expect((route.body ?? route.rawBody?.schema)?.safeParse(ex.body).error, `${label} body`).toBeUndefined();
      const success = Object.entries(route.responses).find(([status, r]) => status.startsWith('2') && r.schema)?.[1];
      if (ex.response !== undefined) expect(success?.schema?.safeParse(ex.response).error, `${label} response`).toBeUndefined();
    }
  });
});

describe('openapi — parameters', () => {
  it('openapi — query integers and booleans are typed as such (the gateway converts the text), never strings with a pattern', () => {
    const schemaOf = (id: string, name: string) => byId(id).parameters!.find((p) => p.name === name)!.schema;
    expect(schemaOf('listAgents', 'page')).toMatchObject({ type: 'integer', minimum: 1 });
    expect(schemaOf('listAgents', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(schemaOf('listFiles', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 10_000 });
    expect(schemaOf('getChanges', 'timeout')).toMatchObject({ type: 'integer', minimum: 0, maximum: 60 });
    for (const [id, name] of [['listFiles', 'recursive'], ['listFiles', 'includeStats'], ['deleteFile', 'permanent'], ['listProjects', 'includeArchived'], ['listTrash', 'recursive']] as const) {
      expect(schemaOf(id, name), `${id} ${name}`).toEqual(expect.objectContaining({ type: 'boolean' }));
    }
    const stringly = operations.flatMap((op) =>
      (op.parameters ?? []).filter((p) => p.in === 'query' && (p.schema?.pattern?.includes('[0-9]') || p.schema?.enum?.includes('true'))).map((p) => `${op.operationId} ${p.name}`),
    );
    expect(stringly, 'type query numbers and booleans with integerQuery / booleanQuery (api/schemas.ts)').toEqual([]);
  });

  it('openapi — the headers routes read are declared: If-Match, Range and the conditionals, X-Signature; X-Request-Id everywhere', () => {
    const headers = (id: string) => (byId(id).parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    expect(headers('updateAgent')).toEqual(['If-Match']);
    expect(headers('downloadFile')).toEqual(['Range', 'If-Range', 'If-None-Match', 'If-Modified-Since']);
    expect(headers('fireTrigger')).toEqual(['X-Signature']);
    expect(headers('createAgent')).toEqual(['Idempotency-Key']);
    for (const op of operations) expect(op.parameters?.at(-1)?.$ref, op.operationId).toBe('#/components/parameters/RequestId');
  });

  it('openapi — every request body states its size limit', () => {
    const bodies = operations.filter((op) => op.requestBody);
    expect(bodies.length).toBeGreaterThan(10);
    for (const op of bodies) expect(op.requestBody!.description, op.operationId).toMatch(/at most (1 MiB|1 GiB|MAX_UPLOAD_BYTES)/);
  });
});
