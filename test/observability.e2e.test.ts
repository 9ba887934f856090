import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string };
type OtlpExport = { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };

/** A minimal OTLP/HTTP (JSON) trace receiver: what the services export lands here. */
const received: { service: string; span: OtlpSpan }[] = [];
let collector: Server;
let stack: Stack;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        for (const rs of (JSON.parse(body) as OtlpExport).resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
          for (const ss of rs.scopeSpans) for (const span of ss.spans) received.push({ service, span });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  stack = await startStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' } });
});

afterAll(async () => {
  await stack?.stop();
  collector?.close();
});

describe('tracing', () => {
  it('tracing — one trace spans the gateway request and the gRPC call it makes, and logs carry its id', async () => {
    const u = await stack.user();
    const id = `traced-${Date.now()}`;
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Traced' }, { 'x-request-id': id })).status).toBe(201);
    const requestLog = () => stack.logsOf('gateway').find((l) => l.requestId === id && l.msg === 'request');
    await expect.poll(requestLog).toBeDefined();
    const traceId = requestLog()!.traceId as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    await expect.poll(() => received.filter((r) => r.span.traceId === traceId).map((r) => r.service).sort(), { timeout: 10_000 }).toEqual(expect.arrayContaining(['gateway', 'projects']));
    const inTrace = received.filter((r) => r.span.traceId === traceId);
    const root = inTrace.find((r) => r.service === 'gateway')!.span;
    expect(root.name).toBe('HTTP POST /v1/agent/projects');
    const create = inTrace.find((r) => r.service === 'projects' && r.span.name.endsWith('/CreateProject'))!.span;
    expect(create.parentSpanId).toBe(root.spanId);
    expect(stack.logsOf('projects').some((l) => l.traceId === traceId && l.requestId === id)).toBe(true);
  });

  it('tracing — every service joins the trace: an Agent create goes gateway → agents → projects and files, and automations answers in the same way', async () => {
    const u = await stack.user();
    const id = `traced-agent-${Date.now()}`;
    const created = await u.request('POST', '/v1/agents', { name: 'Traced agent' }, { 'x-request-id': id });
    expect(created.status).toBe(201);
    const agentId = (created.body as { agentId: string }).agentId;
    const listed = await u.request('GET', `/v1/agents/${agentId}/schedules`, undefined, { 'x-request-id': `${id}-s` });
    expect(listed.status).toBe(200);
    const traceOf = (rid: string) => stack.logsOf('gateway').find((l) => l.requestId === rid && l.msg === 'request')?.traceId as string | undefined;
    await expect.poll(() => traceOf(id) && traceOf(`${id}-s`)).toBeTruthy();
    const services = (traceId: string) => [...new Set(received.filter((r) => r.span.traceId === traceId).map((r) => r.service))].sort();
    await expect.poll(() => services(traceOf(id)!), { timeout: 10_000 }).toEqual(expect.arrayContaining(['agents', 'gateway']));
    await expect.poll(() => services(traceOf(`${id}-s`)!), { timeout: 10_000 }).toEqual(expect.arrayContaining(['automations', 'gateway']));
  });
});
