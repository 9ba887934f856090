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

describe('validation messages', () => {
  const messageOf = (schema: z.ZodType, value: unknown) => {
    try {
      parseWith(schema, value, 'body');
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };

  it('validation — zod\'s own wording never reaches a client; a schema\'s own message does', () => {
    const schema = z
      .object({
        name: z.string().max(3).optional(),
        count: z.number().int().min(1).optional(),
        mode: z.enum(['low', 'high']).optional(),
        tags: z.array(z.string()).max(1).optional(),
        code: z.string().regex(/^a+$/, 'code must be a run of a').optional(),
        id: z.string().regex(/^x$/).optional(),
        required: z.string(),
      })
      .strict();
    const cases: [unknown, string][] = [
      [{ required: 'r', name: 'abcd' }, 'name: must have at most 3 characters'],
      [{ required: 'r', count: 0.5 }, 'count: must be an integer'],
      [{ required: 'r', count: 0 }, 'count: must be at least 1'],
      [{ required: 'r', mode: 'mid' }, 'mode: must be one of "low", "high"'],
      [{ required: 'r', tags: ['a', 'b'] }, 'tags: must have at most 1 elements'],
      [{ required: 'r', code: 'b' }, 'code: code must be a run of a'],
      [{ required: 'r', id: 'y' }, 'id: has the wrong format'],
      [{}, 'required: is required'],
      [{ required: 5 }, 'required: must be of type string'],
    ];
    for (const [value, message] of cases) {
      const got = messageOf(schema, value);
      expect(got, JSON.stringify(value)).toBe(message);
      expect(got).not.toMatch(/Invalid input|Too big|Too small|Invalid option|expected .* received/);
    }
  });
});
