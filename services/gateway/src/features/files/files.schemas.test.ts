import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { parseWith } from '../../api/validate.js';
import { ChangesCursorQuery, ChangesQuery } from './changes.schemas.js';
import { ListFilesQuery, MoveBody } from './files.schemas.js';

/** The `details.field` of the INVALID_ARGUMENT a value gets, or 'ok'. */
function fieldOf(schema: z.ZodType, value: unknown, where: 'query' | 'body' = 'query'): string | undefined {
  try {
    parseWith(schema, value, where);
    return 'ok';
  } catch (err) {
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    return (err as { details?: Record<string, string> }).details?.field;
  }
}

describe('files schemas', () => {
  it('list query — limit is an integer of 1–10,000; cursor a non-empty string', () => {
    expect(parseWith(ListFilesQuery, { limit: '10000', cursor: 'abc' }, 'query')).toMatchObject({ limit: 10_000, cursor: 'abc' });
    expect(parseWith(ListFilesQuery, { limit: '1' }, 'query')).toMatchObject({ limit: 1 });
    for (const limit of ['0', '10001', '-1', '1.5', '1e3', '01', '', 'ten']) expect(fieldOf(ListFilesQuery, { limit }), limit).toBe('limit');
    expect(fieldOf(ListFilesQuery, { cursor: '' })).toBe('cursor');
    expect(fieldOf(ListFilesQuery, { page: '2' })).toBe('page');
  });

  it('changes query — cursor required; limit 1–10,000; timeout whole seconds 0–60', () => {
    expect(parseWith(ChangesQuery, { cursor: 'c' }, 'query')).toEqual({ cursor: 'c' });
    expect(parseWith(ChangesQuery, { cursor: 'c', limit: '5', timeout: '0' }, 'query')).toEqual({ cursor: 'c', limit: 5, timeout: 0 });
    expect(parseWith(ChangesQuery, { cursor: 'c', timeout: '60' }, 'query')).toMatchObject({ timeout: 60 });
    expect(fieldOf(ChangesQuery, {})).toBe('cursor');
    expect(fieldOf(ChangesQuery, { cursor: '' })).toBe('cursor');
    for (const timeout of ['61', '-1', '0.5', 'x']) expect(fieldOf(ChangesQuery, { cursor: 'c', timeout }), timeout).toBe('timeout');
    for (const limit of ['0', '10001']) expect(fieldOf(ChangesQuery, { cursor: 'c', limit }), limit).toBe('limit');
    expect(fieldOf(ChangesQuery, { cursor: 'c', wait: '5' })).toBe('wait');
    expect(parseWith(ChangesCursorQuery, {}, 'query')).toEqual({});
    expect(fieldOf(ChangesCursorQuery, { path: '/files', recursive: 'true' })).toBe('recursive');
  });

  it('move body — from and to required, onConflict one of three, unknown fields refused', () => {
    expect(parseWith(MoveBody, { from: '/files/a', to: '/files/b' }, 'body')).toEqual({ from: '/files/a', to: '/files/b' });
    expect(parseWith(MoveBody, { from: '/files/a', to: '/files/b', onConflict: 'uuid' }, 'body')).toMatchObject({ onConflict: 'uuid' });
    expect(fieldOf(MoveBody, { to: '/files/b' }, 'body')).toBe('from');
    expect(fieldOf(MoveBody, { from: '/files/a' }, 'body')).toBe('to');
    expect(fieldOf(MoveBody, { from: '/files/a', to: '/files/b', onConflict: 'replace' }, 'body')).toBe('onConflict');
    expect(fieldOf(MoveBody, { from: '/files/a', to: '/files/b', recursive: true }, 'body')).toBe('recursive');
    expect(fieldOf(MoveBody, { from: 1, to: '/files/b' }, 'body')).toBe('from');
  });
});
