import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeTool } from '../tool-result.js';
import { TOOLS } from './index.js';
import { workspacePath } from './tool.js';

/** The arguments that name workspace paths, in every tool that takes one. */
const PATH_ARGS = ['path', 'source', 'destination'];

describe('mcp tools', () => {
  it('tools — a relative path is taken relative to /files; an absolute one as given; nothing else is normalized (the path rules refuse `..`)', () => {
    expect(workspacePath('.')).toBe('/files');
    expect(workspacePath('./')).toBe('/files');
    expect(workspacePath('notes/a.md')).toBe('/files/notes/a.md');
    expect(workspacePath('./notes/a.md')).toBe('/files/notes/a.md');
    expect(workspacePath('.hidden')).toBe('/files/.hidden');
    expect(workspacePath('/files/a')).toBe('/files/a');
    expect(workspacePath('/etc/passwd')).toBe('/etc/passwd');
    expect(workspacePath('../x')).toBe('/files/../x');
  });

  it('tools — every path argument of every tool takes a relative path (one schema for all of them)', () => {
    let seen = 0;
    for (const tool of TOOLS) {
      const shape = tool.input.shape as Record<string, z.ZodType>;
      for (const name of PATH_ARGS.filter((n) => n in shape)) {
        expect(shape[name]!.parse('notes/a.md'), `${tool.name} ${name}`).toBe('/files/notes/a.md');
        expect(shape[name]!.safeParse('').success, `${tool.name} ${name}`).toBe(false);
        seen++;
      }
      if ('paths' in shape) expect(shape.paths!.parse(['a', '.']), tool.name).toEqual(['/files/a', '/files']);
    }
    expect(seen).toBeGreaterThanOrEqual(20);
  });

  it('tools — every output schema admits the tool-error result {error: {code, message, details}}, as clients validate it', () => {
    const validator = new AjvJsonSchemaValidator();
    const failure = { error: { code: 'FILE_NOT_FOUND', message: 'no file at /files/a', details: { path: '/files/a' } } };
    for (const tool of TOOLS) {
      const check = validator.getValidator(describeTool(tool).outputSchema as Parameters<typeof validator.getValidator>[0]);
      expect(check(failure).valid, tool.name).toBe(true);
      expect(check({ error: 'FILE_NOT_FOUND' }).valid, tool.name).toBe(false);
    }
  });

  it('tools — every tool declares readOnlyHint, destructiveHint, idempotentHint and openWorldHint; none that only reads destroys', () => {
    for (const { name, annotations } of TOOLS.map(describeTool)) {
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint'] as const) expect(typeof annotations[hint], `${name} ${hint}`).toBe('boolean');
      expect(annotations.openWorldHint, name).toBe(false);
      if (annotations.readOnlyHint) expect(annotations, name).toMatchObject({ destructiveHint: false, idempotentHint: true });
    }
  });
});
