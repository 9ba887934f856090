import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serviceConfig } from '@workspace/platform';
import { configSchema as agents } from '../services/agents/src/config.js';
import { configSchema as automations } from '../services/automations/src/config.js';
import { configSchema as files } from '../services/files/src/config.js';
import { configSchema as gateway } from '../services/gateway/src/config.js';
import { configSchema as projects } from '../services/projects/src/config.js';
import { configSchema as webhooks } from '../services/webhooks/src/config.js';
import { openApiDocument } from '../services/gateway/src/openapi/document.js';

/**
 * The README's configuration table against the code: every variable a process reads is there,
 * every variable there is read by a process (or by the scripts the row names), and a row that
 * names its services names exactly those that read it.
 */
const SCHEMAS = { gateway, projects, files, agents, automations, webhooks };
type Service = keyof typeof SCHEMAS;
const SERVICES = Object.keys(SCHEMAS) as Service[];
const readsOf = (service: Service) => new Set(Object.keys(SCHEMAS[service].shape));
/** Parsed by every gRPC service from the shared base; a row may name only the services it matters to (the outbox's, say). */
const BASE = new Set(Object.keys(serviceConfig({ grpc: 1, metrics: 1 }).shape));

interface Row {
  variables: string[];
  /** The services the row names; undefined when it says "every process", "all" and the like. */
  services: Service[] | undefined;
  scriptsOnly: boolean;
}

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

function configurationTable(): Row[] {
  const start = readme.indexOf('| variable | service | default | meaning |');
  expect(start, 'the README has its configuration table').toBeGreaterThan(0);
  const lines = readme.slice(start).split('\n');
  const rows: Row[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break;
    const [, name = '', service = ''] = line.split('|');
    const variables = [...name.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    const named = service.split(',').map((s) => s.trim());
    const listed = named.filter((s): s is Service => (SERVICES as string[]).includes(s));
    rows.push({
      variables,
      services: listed.length > 0 && listed.length === named.filter((s) => !s.startsWith('`')).length ? listed : undefined,
      scriptsOnly: listed.length === 0 && named.every((s) => s.startsWith('`')),
    });
  }
  return rows;
}

describe('README configuration table', () => {
  const rows = configurationTable();
  const documented = new Set(rows.flatMap((r) => r.variables));

  it('README — every variable a service reads is in the configuration table', () => {
    const missing = SERVICES.flatMap((s) => [...readsOf(s)].filter((v) => !documented.has(v)).map((v) => `${v} (${s})`));
    expect(missing).toEqual([]);
  });

  it('README — every variable in the table is read by a service, or by the scripts its row names', () => {
    const read = new Set(SERVICES.flatMap((s) => [...readsOf(s)]));
    const unknown = rows.filter((r) => !r.scriptsOnly).flatMap((r) => r.variables.filter((v) => !read.has(v)));
    expect(unknown).toEqual([]);
  });

  it('README — a row that names its services names exactly the services that read its own variables', () => {
    const wrong = rows.flatMap((r) =>
      r.services === undefined
        ? []
        : r.variables.filter((v) => !BASE.has(v)).flatMap((v) => {
            const readers = SERVICES.filter((s) => readsOf(s).has(v));
            return readers.join() === SERVICES.filter((s) => r.services!.includes(s)).join() ? [] : [`${v}: README says ${r.services!.join(', ')}, read by ${readers.join(', ') || 'none'}`];
          }),
    );
    expect(wrong).toEqual([]);
  });
});

describe('README routes', () => {
  it('README — every API path it mentions is a route of the gateway (OpenAPI document)', () => {
    const routes = Object.keys((openApiDocument() as { paths: Record<string, unknown> }).paths).map((p) => p.split('/'));
    // A mention is a whole path, a path's start (`/v1/hooks/`), or one with an example value in a `{param}` segment.
    const isRoute = (mention: string) => {
      const segments = mention.replace(/\/+$/, '').split('/');
      return routes.some((route) => segments.length <= route.length && segments.every((s, i) => s === route[i] || (route[i]!.startsWith('{') && i === segments.length - 1) || (route[i]!.startsWith('{') && s.startsWith('{'))));
    };
    const mentions = [...new Set([...readme.matchAll(/\/v1\/[A-Za-z0-9_{}/.-]*/g)].map((m) => m[0]))];
    expect(mentions.length).toBeGreaterThan(10);
    expect(mentions.filter((m) => !isRoute(m))).toEqual([]);
  });
});
