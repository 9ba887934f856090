import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serviceConfig } from '@workspace/platform';
import { configSchema as agents } from '../services/agents/src/config.js';
import { configSchema as automations } from '../services/automations/src/config.js';
import { configSchema as files } from '../services/files/src/config.js';
import { configSchema as gateway } from '../services/gateway/src/config.js';
import { configSchema as projects } from '../services/projects/src/config.js';
import { configSchema as webhooks } from '../services/webhooks/src/config.js';
import { openApiDocument } from '../services/gateway/src/api/openapi/document.js';

/**
 * The documentation against the code. The configuration table (docs/operations.md): every
 * variable a process reads is there, every variable there is read by a process (or by the
 * scripts the row names), and a row that names its services names exactly those that read it.
 * README.md and docs/**: every API path they mention is a route of the gateway, every relative
 * link resolves (a `#heading` to a heading of its file), and the README stays a front door.
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

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** README.md and every Markdown file under docs/, as paths relative to the repository. */
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))].sort();
const readme = read('README.md');
const operations = read('docs/operations.md');

function configurationTable(): Row[] {
  const start = operations.indexOf('| variable | service | default | meaning |');
  expect(start, 'docs/operations.md has the configuration table').toBeGreaterThan(0);
  const lines = operations.slice(start).split('\n');
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

describe('docs — configuration table (docs/operations.md)', () => {
  const rows = configurationTable();
  const documented = new Set(rows.flatMap((r) => r.variables));

  it('docs — every variable a service reads is in the configuration table', () => {
    const missing = SERVICES.flatMap((s) => [...readsOf(s)].filter((v) => !documented.has(v)).map((v) => `${v} (${s})`));
    expect(missing).toEqual([]);
  });

  it('docs — every variable in the table is read by a service, or by the scripts its row names', () => {
    const read = new Set(SERVICES.flatMap((s) => [...readsOf(s)]));
    const unknown = rows.filter((r) => !r.scriptsOnly).flatMap((r) => r.variables.filter((v) => !read.has(v)));
    expect(unknown).toEqual([]);
  });

  it('docs — a row that names its services names exactly the services that read its own variables', () => {
    const wrong = rows.flatMap((r) =>
      r.services === undefined
        ? []
        : r.variables.filter((v) => !BASE.has(v)).flatMap((v) => {
            const readers = SERVICES.filter((s) => readsOf(s).has(v));
            return readers.join() === SERVICES.filter((s) => r.services!.includes(s)).join() ? [] : [`${v}: the table says ${r.services!.join(', ')}, read by ${readers.join(', ') || 'none'}`];
          }),
    );
    expect(wrong).toEqual([]);
  });
});

describe('docs — routes', () => {
  it('docs — every API path README.md and docs/**/*.md mention is a route of the gateway (OpenAPI document)', () => {
    const routes = Object.keys((openApiDocument() as { paths: Record<string, unknown> }).paths).map((p) => p.split('/'));
    // A mention is a whole path, a path's start (`/v1/hooks/`), or one with an example value in a `{param}` segment.
    const isRoute = (mention: string) => {
      const segments = mention.replace(/\/+$/, '').split('/');
      return routes.some((route) => segments.length <= route.length && segments.every((s, i) => s === route[i] || (route[i]!.startsWith('{') && i === segments.length - 1) || (route[i]!.startsWith('{') && s.startsWith('{'))));
    };
    const mentionsOf = (text: string) => [...new Set([...text.matchAll(/\/v1\/[A-Za-z0-9_{}/.-]*/g)].map((m) => m[0]))];
    const mentions = DOCS.flatMap((doc) => mentionsOf(read(doc)).map((m) => ({ doc, m })));
    expect(mentions.length).toBeGreaterThan(50);
    const wrong = mentions.filter(({ m }) => !isRoute(m)).map(({ doc, m }) => `${doc}: ${m}`);
    expect(wrong).toEqual([]);
  });
});

/** The text outside fenced code blocks: headings and links there are Markdown, not code. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The anchors GitHub makes of a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading = ''] of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe('docs — links', () => {
  it('docs — every relative link in README.md and docs/**/*.md names a file of the repository, and a #heading a heading of it', () => {
    const broken: string[] = [];
    let links = 0;
    for (const doc of DOCS) {
      for (const [, target = ''] of prose(read(doc)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        links++;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? join(ROOT, doc) : resolve(ROOT, dirname(doc), decodeURIComponent(path));
        if (relative(ROOT, file).startsWith('..')) broken.push(`${doc}: ${target} (outside the repository)`);
        else if (!existsSync(file)) broken.push(`${doc}: ${target} (no such file)`);
        else if (anchor !== undefined && (!file.endsWith('.md') || !anchorsOf(readFileSync(file, 'utf8')).has(anchor))) broken.push(`${doc}: ${target} (no such heading)`);
      }
    }
    expect(links).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('docs — nothing cites a spec outside the repository', () => {
    const citing = DOCS.filter((doc) => /contract\.md|contract §|\.\.\/shared\//i.test(read(doc)));
    expect(citing).toEqual([]);
  });
});

/** Source files outside dependencies and build output, as paths relative to the repository. */
function sources(): string[] {
  const skip = /(^|\/)(node_modules|dist|gen|\.turbo|results)(\/|$)/;
  return ['services', 'packages', 'scripts', 'bench', 'test', 'proto']
    .flatMap((top) => readdirSync(join(ROOT, top), { recursive: true, encoding: 'utf8' }).map((f) => join(top, f)))
    .filter((f) => !skip.test(f) && /\.(ts|mjs|js|proto)$/.test(f));
}

describe('docs — citations in the code', () => {
  it('docs — every docs/….md#heading the code cites is a heading of that file', () => {
    const anchors = new Map(DOCS.map((doc) => [doc, anchorsOf(read(doc))]));
    const wrong: string[] = [];
    let citations = 0;
    for (const file of sources()) {
      for (const [, doc = '', anchor = ''] of read(file).matchAll(/\b(docs\/[\w/.-]+\.md)#([\w-]+)/g)) {
        citations++;
        if (!anchors.get(doc)?.has(anchor)) wrong.push(`${file}: ${doc}#${anchor}`);
      }
    }
    expect(citations).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });
});

describe('docs — README', () => {
  it('docs — README.md is a front door: at most 320 lines, with the two commands', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(320);
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });
});
