import { describe, expect, it } from 'vitest';
import { expiredConfigs } from './retention.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);

describe('config retention', () => {
  it('config retention — nothing goes while within the limit', () => {
    expect(expiredConfigs({ oldestFirst: ids(3), currentConfigId: 'c2', pinned: new Set(), retention: 3 })).toEqual([]);
  });

  it('config retention — the oldest beyond the limit go, skipping pinned and current ones', () => {
    expect(expiredConfigs({ oldestFirst: ids(5), currentConfigId: 'c4', pinned: new Set(), retention: 3 })).toEqual(['c0', 'c1']);
    expect(expiredConfigs({ oldestFirst: ids(5), currentConfigId: 'c4', pinned: new Set(['c0']), retention: 3 })).toEqual(['c1', 'c2']);
  });

  it('config retention — when pins hold too many, more than the limit stay', () => {
    expect(expiredConfigs({ oldestFirst: ids(4), currentConfigId: 'c3', pinned: new Set(['c0', 'c1', 'c2']), retention: 2 })).toEqual([]);
  });
});
