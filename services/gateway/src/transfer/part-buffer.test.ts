import { describe, expect, it } from 'vitest';
import { PartBuffer } from './part-buffer.js';

describe('part buffer', () => {
  it('part buffer — takes what fits and reports how much', () => {
    const part = new PartBuffer(10);
    expect(part.fill(Buffer.from('abcdef'))).toBe(6);
    const chunk = Buffer.from('ghijklmn');
    const took = part.fill(chunk);
    expect(took).toBe(4);
    expect(part.full).toBe(true);
    expect(part.bytes().toString()).toBe('abcdefghij');
    expect(part.fill(chunk, took)).toBe(0);
  });

  it('part buffer — reads from an offset into the chunk', () => {
    const part = new PartBuffer(4);
    expect(part.fill(Buffer.from('xxab'), 2)).toBe(2);
    expect(part.bytes().toString()).toBe('ab');
  });

  it('part buffer — a small file costs about its size, not a whole part', () => {
    const part = new PartBuffer(8 * 1024 * 1024);
    part.fill(Buffer.alloc(4096, 1));
    expect(part.allocated).toBe(4096);
    part.fill(Buffer.alloc(100, 2));
    expect(part.allocated).toBe(8192);
    expect(part.bytes()).toEqual(Buffer.concat([Buffer.alloc(4096, 1), Buffer.alloc(100, 2)]));
  });

  it('part buffer — storage never grows beyond the capacity and is kept across reset', () => {
    const part = new PartBuffer(100_000);
    for (let i = 0; i < 20; i++) part.fill(Buffer.alloc(7_000, i));
    expect(part.full).toBe(true);
    expect(part.allocated).toBe(100_000);
    part.reset();
    expect(part.length).toBe(0);
    part.fill(Buffer.from('next'));
    expect(part.allocated).toBe(100_000);
    expect(part.bytes().toString()).toBe('next');
  });

  it('part buffer — refuses a capacity that is not a positive integer', () => {
    expect(() => new PartBuffer(0)).toThrow(RangeError);
    expect(() => new PartBuffer(1.5)).toThrow(RangeError);
  });
});
