import { describe, expect, it } from 'vitest';
import { agentTrigrams, trigramsOf } from './search-index.js';

describe('q index trigrams', () => {
  it('q index — trigrams are by code point: an emoji or an astral letter is one character', () => {
    expect(trigramsOf('a😀bc')).toEqual(['a😀b', '😀bc']);
    expect(trigramsOf('𝒜bc')).toEqual(['𝒜bc']);
  });

  it('q index — a text under three code points has none; repeats count once', () => {
    expect(trigramsOf('')).toEqual([]);
    expect(trigramsOf('😀😀')).toEqual([]);
    expect(trigramsOf('aaaa')).toEqual(['aaa']);
  });

  it('q index — name and description are indexed apart, never across their boundary', () => {
    expect([...agentTrigrams({ searchName: 'abc', searchDescription: 'xyz' })].sort()).toEqual(['abc', 'xyz']);
    expect(agentTrigrams({ searchName: 'ab', searchDescription: 'c' }).size).toBe(0);
  });
});
