import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldName, parseWith } from './validate.js';

describe('validation', () => {
  it('validation — nested fields are named as the contract says', () => {
    expect(fieldName(['conversationStarters', 3])).toBe('conversationStarters[3]');
    expect(fieldName(['connectors', 0, 'type'])).toBe('connectors[0].type');
    expect(fieldName([])).toBe('');
  });

  it('validation — unknown, missing and mistyped fields give INVALID_ARGUMENT with details.field', () => {
    const schema = z.object({ name: z.string(), tags: z.array(z.object({ type: z.string() }).strict()).optional() }).strict();
    const fieldOf = (value: unknown) => {
      try {
        parseWith(schema, value, 'body');
      } catch (err) {
        return (err as { code: string; details?: Record<string, string> }).details?.field;
      }
      return 'no error';
    };
    expect(fieldOf({ name: 'a', nmae: 'b' })).toBe('nmae');
    expect(fieldOf({})).toBe('name');
    expect(fieldOf({ name: 1 })).toBe('name');
    expect(fieldOf({ name: 'a', tags: [{ type: 'x' }, { type: 2 }] })).toBe('tags[1].type');
    expect(fieldOf({ name: 'a', tags: [{ type: 'x', extra: 1 }] })).toBe('tags[0].extra');
    expect(fieldOf({ name: 'a' })).toBe('no error');
  });
});
