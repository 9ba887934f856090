import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileQuery } from './matcher.js';
import { requiredLiterals } from './query-literals.js';
import { isTextSummary, mayContain, summarize } from '@workspace/platform';

const where = (text: string, q: string, regex = false, caseSensitive = false, after: [number, number] = [0, 0], max = 1000) =>
  compileQuery(q, regex, caseSensitive)
    .matches(text, after, max)
    .map((m) => `${m.line}:${m.column}`);

/**
 * What a scan line by line with a global JavaScript expression gives (the patterns here mean the
 * same in both, but for one thing: RE2's `\b` is an ASCII word boundary, while JavaScript's, with
 * the `u` and `i` flags, takes the Kelvin sign and long s for word characters, as they fold to k
 * and s; so for a pattern with `\b`, none of which can match them, they are shown as non-word).
 */
function reference(text: string, source: string, caseSensitive: boolean): string[] {
  if (source.includes('\\b')) text = text.replace(/[\u212A\u017F]/g, '#');
  const re = new RegExp(source, `gu${caseSensitive ? '' : 'i'}`);
  return text.split('\n').flatMap((line, i) => [...line.matchAll(re)].map((m) => `${i + 1}:${[...line.slice(0, m.index)].length + 1}`));
}

describe('search matcher', () => {
  it('search matcher — every occurrence, columns in code points, lines split at \\n, resumes after a position', () => {
    expect(where('ab ab\n😀ab\nxab', 'ab')).toEqual(['1:1', '1:4', '2:2', '3:2']);
    expect(where('ab ab\n😀ab\nxab', 'ab', false, false, [1, 1])).toEqual(['1:4', '2:2', '3:2']);
    expect(where('ab ab\n😀ab\nxab', 'ab', false, false, [2, 2], 1)).toEqual(['3:2']);
    expect(where('a\nb', 'a\nb')).toEqual([]);
    expect(where('x😀y', 'z*', true)).toEqual(['1:1', '1:2', '1:3', '1:4']);
    expect(where('\\Aab\nab', '\\Aab', true)).toEqual(['2:1']);
    // \b is ASCII, whatever the case folding: the Kelvin sign is no word character.
    expect(where('\u212Aab', '\\bab', true)).toEqual(['1:2']);
  });

  it('search matcher — the line text is cut to 500 code points', () => {
    const [m] = compileQuery('x', false, true).matches(`${'😀'.repeat(600)}x`, [0, 0], 1);
    expect([...m!.text].length).toBe(500);
    expect(m!.column).toBe(601);
  });

  it('search matcher — RE2 refusals and q bounds are 400 INVALID_ARGUMENT on q', () => {
    for (const q of ['(a)\\1', '(?=a)', '(?<=a)', '(', '']) expect(() => compileQuery(q, true, false), q).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { field: 'q' } }));
    expect(() => compileQuery('😀'.repeat(1000), false, false)).not.toThrow();
    expect(() => compileQuery('a'.repeat(1001), false, false)).toThrow(expect.objectContaining({ details: { field: 'q' } }));
  });

  it('search matcher — a pattern too large a program for linear time to be quick is 400 on q; every literal q and everyday patterns compile', () => {
    // ~160,000 instructions: one 1 MiB file took the files service minutes to match.
    for (const q of ['[^\\n]{0,999}'.repeat(80) + 'z', '[^\\n]{0,999}z', '(a{0,100}){0,100}']) {
      expect(() => compileQuery(q, true, false), q.slice(0, 30)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { field: 'q' } }));
    }
    for (const caseSensitive of [true, false]) {
      for (const q of ['aé😀K'.repeat(250), 'x'.repeat(1000)]) expect(() => compileQuery(q, false, caseSensitive)).not.toThrow();
      for (const q of ['func\\s+\\w+\\(', '\\b(TODO|FIXME|XXX)\\b.*', '[A-Za-z_][A-Za-z0-9_]{0,63}', '.{0,200}', 'https?://[^\\s"]+']) {
        expect(() => compileQuery(q, true, caseSensitive), q).not.toThrow();
      }
    }
  });

  it('search matcher — a line is the text between two \\n: an empty text is one empty line, a final \\n ends with one', () => {
    for (const q of ['^$', '^', 'x*', '$']) {
      expect(where('', q, true), q).toEqual(['1:1']);
      expect(where('', q, true), q).toEqual(reference('', q, false));
    }
    expect(where('abc\n', '^$', true)).toEqual(['2:1']);
    expect(where('abc\n', '^$', true)).toEqual(reference('abc\n', '^$', false));
  });

  it('search matcher — a match never crosses \\n, so a pattern that could is linear in the text (a[^#]*b over 1 MiB of a lines)', () => {
    // From every line start the whole-text search ran to the end: 48 KiB took 90 s, 1 MiB hours.
    const text = `${'a\n'.repeat(512 * 1024)}b`;
    const started = performance.now();
    expect(where(text, 'a[^#]*b', true)).toEqual([]);
    expect(where(`${text}\nab`, 'a[^#]*b', true, false, [0, 0], 5)).toEqual([`${512 * 1024 + 2}:1`]);
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('search matcher — the same matches as a line-by-line scan, for random texts and patterns', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'A', 'é', 'É', '😀', ' ', '\n', 'k', '\u212A'), { maxLength: 80 }).map((c) => c.join(''));
    const pattern = fc.constantFrom('a', 'ab', 'a+b', '[ab]', '^a', 'b$', 'a.b', '(ab|ba)', 'b*', 'é+', 'k', 'K', '\\bab', 'a{2,3}', '😀.', '^$', '^', 'a[^#]*b', 'a\\s*b');
    fc.assert(
      fc.property(text, pattern, fc.boolean(), (t, p, cs) => {
        expect(where(t, p, true, cs)).toEqual(reference(t, p, cs));
      }),
      { numRuns: 500 },
    );
  });
});

describe('search trigrams', () => {
  it('search trigrams — the required literals of a pattern', () => {
    expect(requiredLiterals('foo.*bar')).toEqual(['foo', 'bar']);
    expect(requiredLiterals('ERR_[0-9]{4}_(fatal|warn)')).toEqual(['ERR_', '_']);
    expect(requiredLiterals('abc?d')).toEqual(['ab', 'd']);
    expect(requiredLiterals('abc+d')).toEqual(['abc', 'd']);
    expect(requiredLiterals('abc{0,2}d')).toEqual(['ab', 'd']);
    expect(requiredLiterals('a\\.b\\d')).toEqual(['a.b']);
    expect(requiredLiterals('foo|bar')).toEqual([]);
    expect(requiredLiterals('\\Qa.b\\E')).toEqual([]);
  });

  it('search trigrams — a summary never rules out a file that matches (any case, any pattern)', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', 'A', 'B', 'é', 'É', '😀', ' ', '\n', 'k', '\u212A', 's', '\u017F', 'S'), { maxLength: 120 }).map((c) => c.join(''));
    const literal = fc.array(fc.constantFrom('a', 'b', 'c', 'A', 'é', 'É', '😀', 'k', 'K', 's', 'S', ' '), { minLength: 1, maxLength: 6 }).map((c) => c.join(''));
    const pattern = fc.constantFrom('abc', 'ab+c', 'a.*bc', 'kss', '(?i)ABC', 'éé.', 'a(b|c)ab', 'ab?ca');
    fc.assert(
      fc.property(text, fc.oneof(literal.map((q) => ({ q, regex: false })), pattern.map((q) => ({ q, regex: true }))), fc.boolean(), (t, { q, regex }, cs) => {
        const query = compileQuery(q, regex, cs);
        if (query.matches(t, [0, 0], 1).length > 0) expect(mayContain(summarize(Buffer.from(t), true), query.trigrams)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('search trigrams — rules out most files that lack the text', () => {
    const words = Array.from({ length: 2000 }, (_, i) => `word${i * 7919}`).join(' ');
    const summary = summarize(Buffer.from(words), true);
    const query = compileQuery('zqxSearchMarker', false, false);
    expect(mayContain(summary, query.trigrams)).toBe(false);
    expect(isTextSummary(summarize(Buffer.from([0xff]), false))).toBe(false);
  });
});
