import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldBytes, literalTrigrams, mayContain, summarize, summarizeContent, summaryBytesAtMost, validSummary } from './content-summary.js';

/** The summary as the definition reads: a Set of the distinct folded trigrams, each setting two bits. */
function reference(bytes: Uint8Array): Uint8Array {
  const folded = foldBytes(bytes);
  const distinct = new Set<number>();
  for (let i = 0; i + 2 < folded.length; i++) distinct.add((folded[i]! << 16) | (folded[i + 1]! << 8) | folded[i + 2]!);
  let size = 64;
  while (size < 64 * 1024 && size * 8 < distinct.size * 4) size *= 2;
  const out = new Uint8Array(1 + size);
  out[0] = 1;
  const mask = size * 8 - 1;
  for (const t of distinct) {
    const h1 = Math.imul(t, 0x9e3779b1) >>> 0;
    const x = Math.imul(t ^ (t >>> 13), 0x85ebca6b);
    const h2 = (x ^ (x >>> 16)) >>> 0;
    for (const bit of [h1 & mask, h2 & mask]) out[1 + (bit >>> 3)]! |= 1 << (bit & 7);
  }
  return out;
}

describe('content summary', () => {
  it('content summary — equals the definition for any bytes, also call after call (the scratch bits are cleared each time)', () => {
    // Small alphabets repeat trigrams; the full byte range makes most of them distinct.
    const contents = fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.string({ unit: fc.constantFrom('a', 'B', 'c', ' ', '\n', 'K', 'ſ'), maxLength: 3000 }).map((s) => Buffer.from(s)));
    fc.assert(
      fc.property(fc.array(contents, { minLength: 1, maxLength: 4 }), (batch) => {
        for (const bytes of batch) expect(Buffer.from(summarize(bytes, true)).equals(Buffer.from(reference(bytes)))).toBe(true);
      }),
      { numRuns: 200 },
    );
    // A content with more distinct trigrams than the first scratch list holds (it grows).
    const large = new Uint8Array(200_000).map((_, i) => (i * 2654435761) >>> 11);
    expect(Buffer.from(summarize(large, true)).equals(Buffer.from(reference(large)))).toBe(true);
  });

  it('content summary — summaryBytesAtMost bounds the summary of any content of that size', () => {
    const contents = fc.oneof(fc.uint8Array({ maxLength: 40_000 }), fc.string({ unit: fc.constantFrom('a', 'b', ' '), maxLength: 3000 }).map((s) => Buffer.from(s)));
    fc.assert(
      fc.property(contents, (bytes) => {
        expect(summarize(bytes, true).length).toBeLessThanOrEqual(summaryBytesAtMost(bytes.length));
      }),
      { numRuns: 200 },
    );
    // Distinct trigrams everywhere: the bound is reached, and it never passes the largest filter.
    const distinct = new Uint8Array(200_000).map((_, i) => (i * 2654435761) >>> 11);
    expect(summarize(distinct, true).length).toBeLessThanOrEqual(summaryBytesAtMost(distinct.length));
    expect(summaryBytesAtMost(10 * 1024 * 1024)).toBe(1 + 64 * 1024);
    expect(summaryBytesAtMost(0)).toBe(1 + 64);
  });

  it('content summary — every trigram of the content passes the filter; text and not text are told apart; the shape check', () => {
    const text = Buffer.from('export const answer = 42; // The Answer');
    const summary = summarizeContent(text);
    expect(validSummary(summary)).toBe(true);
    expect(mayContain(summary, literalTrigrams('const answer', true))).toBe(true);
    expect(mayContain(summary, literalTrigrams('THE ANSWER', false))).toBe(true);
    const binary = Uint8Array.of(0xff, 0xfe, 0x41);
    expect(Array.from(summarizeContent(binary))).toEqual([0]);
    expect(validSummary(Uint8Array.of(0))).toBe(true);
    for (const bad of [new Uint8Array(0), Uint8Array.of(2), new Uint8Array(65).fill(0), new Uint8Array(1 + 96).fill(1), new Uint8Array(1 + 128 * 1024).fill(1)]) {
      expect(validSummary(bad)).toBe(false);
    }
  });
});
