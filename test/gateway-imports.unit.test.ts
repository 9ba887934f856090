import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The gateway's layout by role (docs/architecture.md#the-gateways-layout), held by its imports:
 * no import cycle (type-only imports count: a cycle of types is still two files that cannot be
 * read or changed apart); no area under features/ imports another (only its own sub-areas and
 * the area it is nested in: features/agents/transfer may import features/agents); the edge
 * (edge/) and the byte path (transfer/) import no area, and the byte path nothing of the route
 * layer (api/) either; in api/ only the registry names the areas (api/'s tests read areas'
 * schemas: they check the shared query and text schemas where areas use them). Tests are held
 * to the other rules too, so that an area's tests run without another area.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../services/gateway/src');

/** The modules under `dir`, tests included or not. */
function sources(dir: string, tests: boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path, tests);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') && (tests || !name.endsWith('.test.ts')) ? [path] : [];
  });
}

/** Relative imports of a module (static, `export … from` and dynamic), as files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

/** Strongly connected components of more than one module (Tarjan), as paths relative to src/. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        on.delete(w);
        component.push(relative(SRC, w));
        if (w === v) break;
      }
      const self = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || self) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** The route registry: the one module of api/ that lists the areas. */
const REGISTRY = 'api/registry.ts';

/** The area a module belongs to (`features/agents/transfer`), or undefined outside features/. */
function areaOf(path: string): string | undefined {
  return path.startsWith('features/') ? dirname(path) : undefined;
}

/** `inner` is `outer` or nested in it. */
const within = (inner: string, outer: string) => inner === outer || inner.startsWith(`${outer}/`);

/**
 * Imports that break the layout, as `from → to` (paths relative to src/): an area importing
 * another that is neither nested in it nor its ancestor, edge/ or transfer/ importing an area,
 * transfer/ importing api/, and a module of api/ other than the registry importing an area.
 */
function layoutOffenders(graph: Map<string, string[]>): string[] {
  const offenders: string[] = [];
  for (const [file, imports] of graph) {
    const from = relative(SRC, file);
    for (const to of imports.map((i) => relative(SRC, i))) {
      const a = areaOf(from);
      const b = areaOf(to);
      const crossArea = a !== undefined && b !== undefined && !within(a, b) && !within(b, a);
      const edgeOrBytes = /^(edge|transfer)\//.test(from) && b !== undefined;
      const bytesToApi = from.startsWith('transfer/') && to.startsWith('api/');
      const apiToArea = from.startsWith('api/') && from !== REGISTRY && !from.endsWith('.test.ts') && b !== undefined;
      if (crossArea || edgeOrBytes || bytesToApi || apiToArea) offenders.push(`${from} → ${to}`);
    }
  }
  return offenders.sort();
}

describe('gateway — module structure', () => {
  const files = sources(SRC, false);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const withTests = new Map(sources(SRC, true).map((f) => [f, importsOf(f)]));
  const at = (path: string) => join(SRC, path);

  it('the reader of imports is not blind: it sees the route registry import the routes, and a cycle when there is one', () => {
    expect(graph.get(at(REGISTRY))).toContain(at('features/files/files.routes.ts'));
    expect(cycles(new Map([['a', ['b']], ['b', ['a']], ['c', ['a']]]))).toEqual([['a', 'b'].map((p) => relative(SRC, p))].map((c) => c.sort()));
  });

  it('the layout check is not blind: it names an area importing another, a sibling sub-area, and the edge, the byte path or api/ importing an area', () => {
    const offenders = layoutOffenders(
      new Map([
        [at('features/agents/agents.routes.ts'), [at('features/files/files.schemas.ts'), at('features/agents/transfer/agent-json.ts'), at('api/route.ts')]],
        [at('features/agents/transfer/agent-import.route.ts'), [at('features/agents/agents.schemas.ts'), at('transfer/object-store.ts')]],
        [at('features/files/tus/tus.routes.ts'), [at('features/files/search/search.routes.ts'), at('features/files/files.schemas.ts')]],
        [at('features/files/tus/tus.test.ts'), [at('features/links/link-signer.ts')]],
        [at('edge/errors.ts'), [at('features/files/changes.routes.ts')]],
        [at('transfer/send-file.ts'), [at('features/links/links.routes.ts'), at('api/route.ts')]],
        [at('api/route.ts'), [at('features/mcp/mcp.router.ts')]],
        [at(REGISTRY), [at('features/mcp/mcp.openapi.ts')]],
      ]),
    );
    expect(offenders).toEqual([
      'api/route.ts → features/mcp/mcp.router.ts',
      'edge/errors.ts → features/files/changes.routes.ts',
      'features/agents/agents.routes.ts → features/files/files.schemas.ts',
      'features/files/tus/tus.routes.ts → features/files/search/search.routes.ts',
      'features/files/tus/tus.test.ts → features/links/link-signer.ts',
      'transfer/send-file.ts → api/route.ts',
      'transfer/send-file.ts → features/links/links.routes.ts',
    ]);
  });

  it('no import cycle in services/gateway/src', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('the layout: no area imports another, the edge and the byte path import no area, in api/ only the registry does', () => {
    expect(layoutOffenders(withTests)).toEqual([]);
  });
});
