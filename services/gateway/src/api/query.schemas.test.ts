import { describe, expect, it } from 'vitest';
import { parseWith } from './validate.js';
import { ListAgentsQuery } from '../features/agents/agents.schemas.js';
import { ListFilesQuery } from '../features/files/files.schemas.js';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return { message: (err as Error).message, field: (err as { details?: Record<string, string> }).details?.field };
  }
  throw new Error('accepted');
};

describe('query schemas — typed in the document, text on the wire', () => {
  it('query schemas — decimal text becomes a number and true/false a boolean', () => {
    expect(parseWith(ListAgentsQuery, { page: '2', limit: '100' }, 'query')).toEqual({ page: 2, limit: 100 });
    expect(parseWith(ListFilesQuery, { recursive: 'true', includeStats: 'false', limit: '1' }, 'query')).toEqual({ recursive: true, includeStats: false, limit: 1 });
  });

  it('query schemas — other spellings are refused with the parameter named (no sign, leading zero, exponent, 1/0, repeats)', () => {
    for (const page of ['0', '-1', '+1', '01', '1e3', '1.0', ' 1', '', '9007199254740992', 'abc']) {
      expect(refusal(() => parseWith(ListAgentsQuery, { page }, 'query')), page).toMatchObject({ field: 'page', message: expect.stringContaining('page') });
    }
    expect(refusal(() => parseWith(ListAgentsQuery, { limit: '101' }, 'query'))).toMatchObject({ field: 'limit', message: 'limit: limit must be 1–100' });
    expect(refusal(() => parseWith(ListAgentsQuery, { limit: ['1', '2'] }, 'query'))).toMatchObject({ field: 'limit' });
    for (const recursive of ['1', 'TRUE', 'yes', '', ['true', 'true']]) {
      expect(refusal(() => parseWith(ListFilesQuery, { recursive }, 'query')), String(recursive)).toMatchObject({ field: 'recursive', message: 'recursive: must be "true" or "false"' });
    }
  });
});
