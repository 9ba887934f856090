import { describe, expect, it } from 'vitest';
import { checkFields, DEFAULTS, fieldsForCreate } from './fields.js';

const fieldOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as { code: string; details?: { field?: string } }).code === 'INVALID_ARGUMENT' ? (err as { details: { field: string } }).details.field : 'other';
  }
  return undefined;
};

describe('agent fields', () => {
  it('agent fields — create fills every default and trims the name', () => {
    expect(fieldsForCreate({ name: '  Helper  ' })).toEqual({ ...DEFAULTS, name: 'Helper' });
  });

  it('agent fields — name is required on create and 1–100 characters after trimming', () => {
    expect(fieldOf(() => fieldsForCreate({}))).toBe('name');
    expect(fieldOf(() => fieldsForCreate({ name: '   ' }))).toBe('name');
    expect(fieldOf(() => fieldsForCreate({ name: 'x'.repeat(101) }))).toBe('name');
    expect(fieldOf(() => fieldsForCreate({ name: ` ${'x'.repeat(100)} ` }))).toBeUndefined();
    expect(fieldOf(() => fieldsForCreate({ name: '🚀'.repeat(100) }))).toBeUndefined();
  });

  it('agent fields — limits of text fields', () => {
    expect(fieldOf(() => checkFields({ description: 'd'.repeat(1_001) }))).toBe('description');
    expect(fieldOf(() => checkFields({ goal: 'g'.repeat(4_001) }))).toBe('goal');
    expect(fieldOf(() => checkFields({ instructions: 'i'.repeat(64_001) }))).toBe('instructions');
    expect(fieldOf(() => checkFields({ description: 'd'.repeat(1_000), goal: 'g'.repeat(4_000), instructions: 'i'.repeat(64_000) }))).toBeUndefined();
    expect(fieldOf(() => checkFields({ goal: 'bad \ud800 surrogate' }))).toBe('goal');
  });

  it('agent fields — conversation starters: at most 10, each 1–500, nested field names', () => {
    expect(fieldOf(() => checkFields({ conversationStarters: Array(11).fill('s') }))).toBe('conversationStarters');
    expect(fieldOf(() => checkFields({ conversationStarters: ['a', 'b', 'c', ''] }))).toBe('conversationStarters[3]');
    expect(fieldOf(() => checkFields({ conversationStarters: ['x'.repeat(501)] }))).toBe('conversationStarters[0]');
    expect(fieldOf(() => checkFields({ conversationStarters: 'hello' }))).toBe('conversationStarters');
  });

  it('agent fields — enums and booleans', () => {
    for (const mode of ['low', 'medium', 'high']) expect(checkFields({ responseMode: mode })).toEqual({ responseMode: mode });
    expect(fieldOf(() => checkFields({ responseMode: 'HIGH' }))).toBe('responseMode');
    expect(fieldOf(() => checkFields({ threadCreationMode: 'manual' }))).toBe('threadCreationMode');
    expect(fieldOf(() => checkFields({ threadManagementEnabled: 'true' }))).toBe('threadManagementEnabled');
  });

  it('agent fields — skills: null or at most 50 strings of 1–100', () => {
    expect(checkFields({ skills: null })).toEqual({ skills: null });
    expect(checkFields({ skills: ['search'] })).toEqual({ skills: ['search'] });
    expect(fieldOf(() => checkFields({ skills: Array(51).fill('s') }))).toBe('skills');
    expect(fieldOf(() => checkFields({ skills: ['ok', 'x'.repeat(101)] }))).toBe('skills[1]');
    expect(fieldOf(() => checkFields({ skills: [1] }))).toBe('skills[0]');
  });

  it('agent fields — connectors: null or at most 20 objects with a string type, 8 KiB each', () => {
    expect(checkFields({ connectors: [{ type: 'github', repo: 'a/b' }] })).toEqual({ connectors: [{ type: 'github', repo: 'a/b' }] });
    expect(fieldOf(() => checkFields({ connectors: Array(21).fill({ type: 't' }) }))).toBe('connectors');
    expect(fieldOf(() => checkFields({ connectors: [{ type: 't' }, { kind: 'x' }] }))).toBe('connectors[1].type');
    expect(fieldOf(() => checkFields({ connectors: [{ type: 't', blob: 'x'.repeat(8 * 1024) }] }))).toBe('connectors[0]');
    expect(fieldOf(() => checkFields({ connectors: ['github'] }))).toBe('connectors[0]');
  });

  it('agent fields — connectors: at most 16 levels deep (the connector is level 1) and finite numbers only', () => {
    const deep = (levels: number) => {
      let value: Record<string, unknown> = { leaf: 1 };
      for (let i = 2; i < levels; i++) value = { a: value };
      return { type: 't', a: value };
    };
    expect(checkFields({ connectors: [deep(16)] })).toEqual({ connectors: [deep(16)] });
    expect(fieldOf(() => checkFields({ connectors: [{ type: 't' }, deep(17)] }))).toBe('connectors[1]');
    expect(fieldOf(() => checkFields({ connectors: [deep(100_000)] }))).toBe('connectors[0]');
    for (const n of [Infinity, -Infinity, NaN]) expect(fieldOf(() => checkFields({ connectors: [{ type: 't', list: [n] }] }))).toBe('connectors[0]');
  });

  it('agent fields — knowledge files: at most 20 {path} objects (the path rules are the files service\'s)', () => {
    expect(checkFields({ knowledgeFiles: [{ path: '/files/a.md' }] })).toEqual({ knowledgeFiles: [{ path: '/files/a.md' }] });
    expect(fieldOf(() => checkFields({ knowledgeFiles: Array(21).fill({ path: '/files/a' }) }))).toBe('knowledgeFiles');
    expect(fieldOf(() => checkFields({ knowledgeFiles: [{ path: '/files/a' }, { path: 7 }] }))).toBe('knowledgeFiles[1].path');
    expect(fieldOf(() => checkFields({ knowledgeFiles: [{ path: '' }] }))).toBe('knowledgeFiles[0].path');
    expect(fieldOf(() => checkFields({ knowledgeFiles: [{ path: '/files/a', size: 3 }] }))).toBe('knowledgeFiles[0].size');
  });
});
