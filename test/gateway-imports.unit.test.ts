import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The gateway's modules form no import cycle (type-only imports count: a cycle of types is still
 * two files that cannot be read or changed apart), and its byte path (transfer/) and protocol
 * adapters name the services through clients.ts, never through a route module.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../services/gateway/src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
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

describe('gateway — module structure', () => {
  const files = sources(SRC);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it('the reader of imports is not blind: it sees the route registry import the routes, and a cycle when there is one', () => {
    expect(graph.get(join(SRC, 'api/registry.ts'))).toContain(join(SRC, 'features/files/files.routes.ts'));
    expect(cycles(new Map([['a', ['b']], ['b', ['a']], ['c', ['a']]]))).toEqual([['a', 'b'].map((p) => relative(SRC, p))].map((c) => c.sort()));
  });

  it('no import cycle in services/gateway/src', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('the byte path (transfer/) imports no route module; tus (a protocol at the edge) only the route registry', () => {
    const registry = new Set(['api/route.ts', 'api/request-headers.ts']);
    const offenders = files
      .filter((f) => /\/(transfer|tus)\//.test(f))
      .flatMap((f) => importsOf(f).map((i) => [relative(SRC, f), relative(SRC, i)] as const))
      .filter(([from, to]) => to.startsWith('routes/') && !(from.startsWith('tus/') && registry.has(to)))
      .map(([from, to]) => `${from} → ${to}`);
    expect(offenders).toEqual([]);
  });
});
