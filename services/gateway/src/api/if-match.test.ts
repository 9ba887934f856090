import { describe, expect, it } from 'vitest';
import { parseFileIfMatch, parseIfMatch, parseIfNoneMatchStar } from './if-match.js';

describe('If-Match', () => {
  it('If-Match — one strong tag gives its value; no header gives undefined', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch(' "cfg_0123" ')).toBe('cfg_0123');
  });

  it('If-Match — weak tags are kept so they fail the strong comparison', () => {
    expect(parseIfMatch('W/"cfg_1"')).toBe('W/cfg_1');
  });

  it('If-Match — *, lists and unquoted values are refused with details.field', () => {
    for (const bad of ['*', '"a", "b"', 'cfg_1', '"unterminated', '']) {
      expect(() => parseIfMatch(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { field: 'If-Match' } }));
    }
  });

  it('file If-Match — one quoted 64-hex sha256 (case folded); *, lists, weak, bare and other tags → 400 naming If-Match', () => {
    const sha = 'ab'.repeat(32);
    expect(parseFileIfMatch(undefined)).toBeUndefined();
    expect(parseFileIfMatch(` "${sha}" `)).toBe(sha);
    expect(parseFileIfMatch(`"${sha.toUpperCase()}"`)).toBe(sha);
    for (const bad of ['*', sha, `W/"${sha}"`, `"${sha}", "${sha}"`, `"${sha}0"`, '"cfg_1"', '""', '']) {
      expect(() => parseFileIfMatch(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { field: 'If-Match' } }));
    }
  });

  it('upload If-None-Match — only *; anything else → 400 naming If-None-Match', () => {
    expect(parseIfNoneMatchStar(undefined)).toBeUndefined();
    expect(parseIfNoneMatchStar(' * ')).toBe(true);
    for (const bad of ['"abc"', 'W/*', '"*"', '']) {
      expect(() => parseIfNoneMatchStar(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { field: 'If-None-Match' } }));
    }
  });
});
