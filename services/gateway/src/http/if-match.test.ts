import { describe, expect, it } from 'vitest';
import { parseIfMatch } from './if-match.js';

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
});
