import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { parseWith } from './validate.js';
import { CreateAgentBody } from '../features/agents/agents.schemas.js';
import { CreateTriggerBody } from '../features/automations/automations.schemas.js';
import { ExportQuery } from '../features/files/files.schemas.js';
import { CreateProjectBody, UpdateProjectBody } from '../features/projects/projects.schemas.js';

/** The `details.field` of the INVALID_ARGUMENT a value gets, or 'ok'. */
function fieldOf(schema: z.ZodType, value: unknown): string | undefined {
  try {
    parseWith(schema, value, 'body');
    return 'ok';
  } catch (err) {
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('no lone surrogates') });
    return (err as { details?: Record<string, string> }).details?.field;
  }
}

describe('text fields', () => {
  // Found by the fuzz suite: `"\ud800"` is valid JSON; gRPC stored U+FFFD and answered 201.
  it('schemas — a lone surrogate in project, trigger, knowledge-file and connector text is refused, never stored as U+FFFD', () => {
    for (const bad of ['\ud800', 'a\udfffb', 'x\ud83d']) {
      expect(fieldOf(CreateProjectBody, { name: bad }), bad).toBe('name');
      expect(fieldOf(CreateProjectBody, { name: 'p', goal: bad })).toBe('goal');
      expect(fieldOf(CreateProjectBody, { name: 'p', instructions: bad })).toBe('instructions');
      expect(fieldOf(UpdateProjectBody, { name: bad, goal: 'g' })).toBe('name');
      expect(fieldOf(UpdateProjectBody, { name: 'p', goal: bad })).toBe('goal');
      expect(fieldOf(UpdateProjectBody, { name: 'p', instructions: bad })).toBe('instructions');
      expect(fieldOf(ExportQuery, { name: bad })).toBe('name');
      expect(fieldOf(CreateTriggerBody, { name: bad })).toBe('name');
      expect(fieldOf(CreateAgentBody, { name: 'a', knowledgeFiles: [{ path: `/files/${bad}` }] })).toBe('knowledgeFiles[0].path');
      expect(fieldOf(CreateAgentBody, { name: 'a', connectors: [{ type: bad }] })).toBe('connectors[0]');
      expect(fieldOf(CreateAgentBody, { name: 'a', connectors: [{ type: 't', nested: [{ deeper: bad }] }] })).toBe('connectors[0]');
      expect(fieldOf(CreateAgentBody, { name: 'a', connectors: [{ type: 't', [bad]: 1 }] })).toBe('connectors[0]');
    }
  });

  it('schemas — any well-formed Unicode passes, astral characters included', () => {
    for (const good of ['😀', 'ｈｏｍｅ', '日本語', 'e\u0301', '\u{10ffff}']) {
      expect(fieldOf(CreateProjectBody, { name: good, goal: good, instructions: good }), good).toBe('ok');
      expect(fieldOf(CreateTriggerBody, { name: good })).toBe('ok');
      expect(fieldOf(CreateAgentBody, { name: 'a', knowledgeFiles: [{ path: `/files/${good}` }], connectors: [{ type: good, [good]: [good] }] })).toBe('ok');
    }
  });
});
