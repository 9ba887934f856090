import { describe, expect, it } from 'vitest';
import { tenantKey, userTag } from './tenant.js';

describe('tenant', () => {
  it('tenant — keys are fixed-length hex whatever the user id holds, and distinct per user', () => {
    const ids = ['alice', 'alice}', '{u:alice}', 'a/../b', '\u0000', 'x'.repeat(256), 'ユーザー'];
    const keys = ids.map(tenantKey);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(ids.length);
    expect(userTag('alice}')).toMatch(/^\{u:[0-9a-f]{64}\}$/);
  });
});
