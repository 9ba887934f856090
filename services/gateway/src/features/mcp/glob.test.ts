import { describe, expect, it } from 'vitest';
import { globMatcher } from './glob.js';

describe('mcp glob', () => {
  it('glob — a pattern without / matches names at any depth', () => {
    const m = globMatcher('*.md');
    expect(m('a.md')).toBe(true);
    expect(m('x/y/a.md')).toBe(true);
    expect(m('a.mdx')).toBe(false);
  });
  it('glob — ** spans zero or more folders, * stays in a name', () => {
    const m = globMatcher('src/**/*.ts');
    expect(m('src/a.ts')).toBe(true);
    expect(m('src/x/y/a.ts')).toBe(true);
    expect(m('lib/a.ts')).toBe(false);
    expect(globMatcher('src/*.ts')('src/x/a.ts')).toBe(false);
  });
  it('glob — classes, alternatives, ? and regex characters taken literally', () => {
    expect(globMatcher('file[0-9].{txt,md}')('d/file3.md')).toBe(true);
    expect(globMatcher('file[0-9].{txt,md}')('file3.js')).toBe(false);
    expect(globMatcher('a?c')('abc')).toBe(true);
    expect(globMatcher('a+(b)')('a+(b)')).toBe(true);
  });
});
