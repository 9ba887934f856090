import { describe, expect, it } from 'vitest';
import { checkJsonValue } from './json-value.js';

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 ? { a: value } : [value];
  return value;
}

describe('json values', () => {
  it('json values — depth counts objects and arrays, the value itself as level 1', () => {
    expect(checkJsonValue(nested(16), 16)).toBeUndefined();
    expect(checkJsonValue(nested(17), 16)).toBe('too-deep');
    expect(checkJsonValue({ type: 'x', list: [1, 2, { a: null }] }, 3)).toBeUndefined();
    expect(checkJsonValue({ type: 'x', list: [1, 2, { a: null }] }, 2)).toBe('too-deep');
    expect(checkJsonValue('scalar', 0)).toBeUndefined();
  });

  it('json values — 100,000 levels are inspected without exhausting the stack', () => {
    expect(checkJsonValue(nested(100_000), 64)).toBe('too-deep');
  });

  it('json values — numbers must be finite', () => {
    for (const bad of [Infinity, -Infinity, NaN]) expect(checkJsonValue({ type: 't', deep: [{ n: bad }] }, 16)).toBe('not-finite');
    expect(checkJsonValue({ n: Number.MAX_VALUE, m: -0 }, 16)).toBeUndefined();
  });
});
