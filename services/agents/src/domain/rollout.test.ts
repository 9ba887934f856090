import { describe, expect, it } from 'vitest';
import { checkRouting, pickAtRandom, pickByKey, primaryOf, type RouteEntry } from './rollout.js';

const A = `cfg_${'a'.repeat(32)}`;
const B = `cfg_${'b'.repeat(32)}`;
const C = `cfg_${'c'.repeat(32)}`;
const D = `cfg_${'d'.repeat(32)}`;
const KEYS = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);

function shares(routing: RouteEntry[], pick: (i: number) => string): Map<string, number> {
  const counts = new Map<string, number>(routing.map((e) => [e.configId, 0]));
  for (let i = 0; i < KEYS.length; i++) {
    const id = pick(i);
    counts.set(id, counts.get(id)! + 1);
  }
  return new Map([...counts].map(([id, n]) => [id, (100 * n) / KEYS.length]));
}

function assignments(routing: RouteEntry[]): string[] {
  return KEYS.map((k) => pickByKey(routing, k));
}

describe('rollout — weighted rendezvous hashing', () => {
  it('rollout — the same key always gets the same config (1,000 keys, asked again in another order)', () => {
    const routing = [{ configId: A, weight: 70 }, { configId: B, weight: 20 }, { configId: C, weight: 10 }];
    const keys = KEYS.slice(0, 1_000);
    const first = keys.map((k) => pickByKey(routing, k));
    const again = [...keys].reverse().map((k) => pickByKey(routing, k)).reverse();
    expect(again).toEqual(first);
    // The order the entries are listed in does not matter to the choice.
    expect(keys.map((k) => pickByKey([...routing].reverse(), k))).toEqual(first);
  });

  it.each([
    [[{ configId: A, weight: 50 }, { configId: B, weight: 50 }]],
    [[{ configId: A, weight: 90 }, { configId: B, weight: 10 }]],
    [[{ configId: A, weight: 1 }, { configId: B, weight: 99 }]],
    [[{ configId: A, weight: 60 }, { configId: B, weight: 25 }, { configId: C, weight: 10 }, { configId: D, weight: 5 }]],
  ])('rollout — 10,000 keys spread within ±5 points of the weights (%j)', (routing) => {
    const got = shares(routing, (i) => pickByKey(routing, KEYS[i]!));
    for (const e of routing) expect(Math.abs(got.get(e.configId)! - e.weight)).toBeLessThanOrEqual(5);
  });

  it('rollout — two configs: a weight change moves exactly the keys it must, all towards the one that grew', () => {
    const before = assignments([{ configId: A, weight: 50 }, { configId: B, weight: 50 }]);
    const after = assignments([{ configId: A, weight: 40 }, { configId: B, weight: 60 }]);
    const moved = before.map((id, i) => [id, after[i]] as const).filter(([x, y]) => x !== y);
    expect(moved.every(([from, to]) => from === A && to === B)).toBe(true);
    // 10 points of the keys must move; a few more or fewer by chance.
    expect(Math.abs((100 * moved.length) / KEYS.length - 10)).toBeLessThanOrEqual(1.5);
  });

  it('rollout — three configs: keys never leave a config whose weight grew, nor go to one whose weight shrank', () => {
    const before = assignments([{ configId: A, weight: 50 }, { configId: B, weight: 30 }, { configId: C, weight: 20 }]);
    const after = assignments([{ configId: A, weight: 35 }, { configId: B, weight: 45 }, { configId: C, weight: 20 }]);
    const moved = before.map((id, i) => [id, after[i]] as const).filter(([x, y]) => x !== y);
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.some(([from]) => from === B)).toBe(false);
    expect(moved.some(([, to]) => to === A)).toBe(false);
  });

  it('rollout — a new config only takes keys; a removed config only gives its own away', () => {
    const two = assignments([{ configId: A, weight: 50 }, { configId: B, weight: 50 }]);
    const three = assignments([{ configId: A, weight: 40 }, { configId: B, weight: 40 }, { configId: C, weight: 20 }]);
    two.forEach((id, i) => {
      if (three[i] !== id) expect(three[i]).toBe(C);
    });
    three.forEach((id, i) => {
      if (id !== C) expect(two[i]).toBe(id);
    });
  });

  it('rollout — without a key, configs are drawn at random by weight', () => {
    const routing = [{ configId: A, weight: 80 }, { configId: B, weight: 15 }, { configId: C, weight: 5 }];
    expect(pickAtRandom(routing, () => 0)).toBe(A);
    expect(pickAtRandom(routing, () => 0.8)).toBe(B);
    expect(pickAtRandom(routing, () => 0.9999)).toBe(C);
    const got = shares(routing, () => pickAtRandom(routing));
    for (const e of routing) expect(Math.abs(got.get(e.configId)! - e.weight)).toBeLessThanOrEqual(5);
  });
});

describe('rollout — routing rules', () => {
  const field = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return (err as { code: string; details?: { field?: string } }).details?.field;
    }
    return 'no error';
  };

  it('rollout — the primary config is the entry of greatest weight, the first on ties', () => {
    expect(primaryOf([{ configId: A, weight: 30 }, { configId: B, weight: 70 }])).toBe(B);
    expect(primaryOf([{ configId: A, weight: 40 }, { configId: B, weight: 40 }, { configId: C, weight: 20 }])).toBe(A);
  });

  it('rollout — 2–5 distinct configs, integer weights 1–99 summing to 100; errors name the field', () => {
    expect(checkRouting([{ configId: A, weight: 99 }, { configId: B, weight: 1 }])).toHaveLength(2);
    expect(field(() => checkRouting([{ configId: A, weight: 100 }]))).toBe('routing');
    const six = [A, B, C, D, 'e', 'f'].map((configId) => ({ configId, weight: 10 }));
    expect(field(() => checkRouting(six))).toBe('routing');
    expect(field(() => checkRouting([{ configId: A, weight: 50 }, { configId: A, weight: 50 }]))).toBe('routing[1].configId');
    expect(field(() => checkRouting([{ configId: A, weight: 0 }, { configId: B, weight: 100 }]))).toBe('routing[0].weight');
    expect(field(() => checkRouting([{ configId: A, weight: 50.5 }, { configId: B, weight: 49.5 }]))).toBe('routing[0].weight');
    expect(field(() => checkRouting([{ configId: A, weight: 50 }, { configId: B, weight: 40 }]))).toBe('routing');
    expect(field(() => checkRouting([{ configId: A, weight: 50 }, { configId: B, weight: 40 }], 'aliases[2].routing'))).toBe('aliases[2].routing');
  });
});
