import { describe, expect, it } from 'vitest';
import { lineageCycle } from './lineage.js';

describe('lineageCycle', () => {
  it('lineage — chains that end (no parent, or a parent outside the list) have no cycle', () => {
    expect(lineageCycle([])).toBeUndefined();
    expect(lineageCycle([{ configId: 'a', parentConfigId: null }, { configId: 'b', parentConfigId: 'a' }, { configId: 'c', parentConfigId: 'b' }])).toBeUndefined();
    expect(lineageCycle([{ configId: 'a', parentConfigId: 'elsewhere' }, { configId: 'b' }, { configId: 'c', parentConfigId: '' }])).toBeUndefined();
  });

  it('lineage — a config its own parent, A → B → A, and a longer loop behind a tail are found', () => {
    expect(lineageCycle([{ configId: 'a', parentConfigId: 'a' }])).toBe(0);
    expect(lineageCycle([{ configId: 'a', parentConfigId: 'b' }, { configId: 'b', parentConfigId: 'a' }])).toBeDefined();
    const found = lineageCycle([
      { configId: 't', parentConfigId: 'x' },
      { configId: 'x', parentConfigId: 'y' },
      { configId: 'y', parentConfigId: 'z' },
      { configId: 'z', parentConfigId: 'x' },
    ]);
    expect([1, 2, 3]).toContain(found);
  });
});
