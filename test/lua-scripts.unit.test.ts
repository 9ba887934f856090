import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { luaScript } from '@workspace/platform';

/**
 * Every Lua script the services send to Redis starts with Redis 7's shebang (luaScript() in
 * packages/platform/src/lua.ts): with it, a Redis Cluster refuses a script that touches any key
 * outside the slot of the keys it declares, so the suites on the cluster (e2e-scaled, and the
 * file index's own suites in services/files/test/index-cluster.int.test.ts) prove every key a
 * script builds inside Lua stays in the user's slot. This test finds every `redis.call` in the
 * source and holds the string it is in to that rule.
 */
const repo = fileURLToPath(new URL('..', import.meta.url));

/**
 * Pieces of Lua that scripts start with (`${PRELUDE}` …): they are not sent alone, and every
 * place that uses one must itself be a script (or another of these pieces).
 */
const FRAGMENTS = ['PRELUDE', 'CK_PRELUDE', 'HELPERS', 'TOMBSTONED_LUA', 'IF_HELD'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}
const roots = ['packages', 'services'].flatMap((top) => readdirSync(join(repo, top)).map((p) => join(repo, top, p, 'src')));
const files = roots.filter((r) => statSync(r, { throwIfNoEntry: false })?.isDirectory()).flatMap(sources);

/** The offset of the backtick that opens the template literal around `at`, or -1 (Lua inside our templates escapes its backticks). */
function openingBacktick(text: string, at: number): number {
  for (let i = at - 1; i >= 0; i--) if (text[i] === '`' && text[i - 1] !== '\\') return i;
  return -1;
}
/** Whether the offset is on a line of a TypeScript comment. */
function inComment(text: string, at: number): boolean {
  const line = text.slice(text.lastIndexOf('\n', at) + 1, at).trimStart();
  return line.startsWith('*') || line.startsWith('/*') || line.startsWith('//');
}
/** What the literal opening at `tick` is: a script (luaScript(`…), a named fragment, or something else. */
function literalKind(text: string, tick: number): { kind: 'script' } | { kind: 'fragment'; name: string } | { kind: 'other'; before: string } {
  const before = text.slice(Math.max(0, tick - 80), tick);
  if (/luaScript\(\s*$/.test(before)) return { kind: 'script' };
  const declared = /const ([A-Z_]+) = $/.exec(before);
  if (declared && FRAGMENTS.includes(declared[1]!)) return { kind: 'fragment', name: declared[1]! };
  return { kind: 'other', before: before.split('\n').at(-1)! };
}

describe('Lua scripts', () => {
  it('lua — luaScript() starts a script with the shebang, and its flags when asked', () => {
    expect(luaScript('return 1')).toBe('#!lua\nreturn 1');
    expect(luaScript('return 1', { readOnly: true })).toBe('#!lua flags=no-writes\nreturn 1');
    expect(luaScript('return 1', { allowOom: true })).toBe('#!lua flags=allow-oom\nreturn 1');
    expect(luaScript('return 1', { readOnly: true, allowOom: true })).toBe('#!lua flags=no-writes,allow-oom\nreturn 1');
  });

  it('lua — every redis.call in the source is in a script built by luaScript() (or in a fragment only scripts start with)', () => {
    const strays: string[] = [];
    let calls = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/redis\.call\(/g)) {
        if (inComment(text, m.index)) continue;
        calls++;
        const tick = openingBacktick(text, m.index);
        const kind = tick < 0 ? { kind: 'other' as const, before: '(not in a template literal)' } : literalKind(text, tick);
        if (kind.kind === 'other') strays.push(`${relative(repo, file)}:${text.slice(0, m.index).split('\n').length} (${kind.before.trim()})`);
      }
    }
    expect(calls, 'the scan found the scripts').toBeGreaterThan(200);
    expect(strays, 'Lua not built by luaScript()').toEqual([]);
  });

  it('lua — every fragment is used only at the start of a script or of another fragment', () => {
    const misuses: string[] = [];
    let uses = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const name of FRAGMENTS) {
        for (const m of text.matchAll(new RegExp(`\\$\\{${name}\\}`, 'g'))) {
          uses++;
          const tick = openingBacktick(text, m.index);
          const kind = literalKind(text, tick);
          if (tick !== m.index - 1 || kind.kind === 'other') misuses.push(`${relative(repo, file)}: \${${name}}`);
        }
      }
    }
    expect(uses).toBeGreaterThan(30);
    expect(misuses).toEqual([]);
  });
});
