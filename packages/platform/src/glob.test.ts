import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { globMatcher } from './glob.js';

/** What picomatch, with the options the search once used, says: the reference for globs it matches in reasonable time. */
const reference = (glob: string) => picomatch(glob, { dot: true, basename: !glob.includes('/'), strictSlashes: true });

const PATHS = ['a.md', '.hidden.md', 'docs/a.md', 'docs/deep/b.md', 'src/x.ts', 'src/lib/y.ts', 'src/lib/y.js', 'src', 'a{b', 'a[b', 'x-y', 'x/y', 'é/ü.txt', '😀.md'];
const GLOBS = [
  '*.md', 'docs/*.md', '**/*.md', 'src/**/*.ts', 'src/**', '**', '*', '**/b.md', 'docs/**/b.md', '*.{js,ts}', '{src,docs}/**/*.{md,ts}', 'y.?s', '[ab].md',
  '[^a]*.md', '[a-c].md', 'src/*/y.*', '**/**/*.ts', 'src/**/**', 'a\\{b', 'a{b', 'a[b', '*-*', '*/y', 'é/*', '*.txt', '😀.*', '{a,{b,c}}.md',
];

describe('search glob', () => {
  it('glob — agrees with picomatch on the globs the API documents', () => {
    for (const glob of GLOBS) {
      const ours = globMatcher(glob);
      const theirs = reference(glob);
      for (const path of PATHS) expect(ours(path), `${glob} on ${path}`).toBe(theirs(path));
    }
  });

  it('glob — random globs of stars, folders and names agree with picomatch (no `.` or `..` segments)', () => {
    // `**` as a whole segment only: picomatch lets one beside other characters cross folders at times.
    const part = fc.constantFrom('*', '?', 'a', 'b', '.', '-', '{a,b}', '[ab]', '[^a]');
    const segment = fc.oneof(fc.constant('**'), fc.array(part, { minLength: 1, maxLength: 4 }).map((p) => p.join('')).filter((s) => s !== '.' && s !== '..' && !s.includes('**')));
    const glob = fc.array(segment, { minLength: 1, maxLength: 3 }).map((segs) => segs.join('/'));
    const path = fc.array(fc.stringMatching(/^[-ab.]{1,4}$/).filter((s) => s !== '.' && s !== '..'), { minLength: 1, maxLength: 4 }).map((segs) => segs.join('/'));
    fc.assert(
      fc.property(glob, fc.array(path, { minLength: 1, maxLength: 8 }), (g, paths) => {
        const ours = globMatcher(g);
        const theirs = reference(g);
        for (const p of paths) expect(ours(p), `${g} on ${p}`).toBe(theirs(p));
      }),
      { numRuns: 500 },
    );
  });

  it('glob — a class never matches `/`, a range across it neither; an escaped `-` is no range; `[!…]` is a complement', () => {
    // picomatch reads a `[!…]` that starts the glob as the literal text or a class of `!` and the rest.
    expect(globMatcher('[!a]*.md')('a.md')).toBe(false);
    expect(globMatcher('[!a]*.md')('b.md')).toBe(true);
    expect(globMatcher('a[!x]b/c')('a/b/c')).toBe(false);
    expect(globMatcher('a[!-0]b/c')('a/b/c')).toBe(false);
    expect(globMatcher('a[!-0]b/c')('a.b/c')).toBe(true);
    expect(globMatcher('[a\\-c]')('b')).toBe(false);
    expect(globMatcher('[a\\-c]')('-')).toBe(true);
  });

  it('glob — linear time: many stars against long names and deep paths answer at once', () => {
    const started = Date.now();
    expect(globMatcher(`${'*a'.repeat(400)}b`)('a'.repeat(255))).toBe(false);
    expect(globMatcher(`${'**/'.repeat(300)}x`)(`${'a/'.repeat(400)}y`)).toBe(false);
    expect(globMatcher(`${'*/'.repeat(300)}*b`)(`${'a/'.repeat(400)}c`)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('glob — over 1,000 characters or a reversed range → 400 INVALID_ARGUMENT on glob', () => {
    for (const glob of ['x'.repeat(1_001), '[z-a]']) expect(() => globMatcher(glob)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { field: 'glob' } }));
    expect(globMatcher('😀'.repeat(1_000))('😀'.repeat(1_000))).toBe(true);
  });
});
