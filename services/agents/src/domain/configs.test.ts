import { describe, expect, it } from 'vitest';
import { buildConfig, sameAsCurrent } from './configs.js';
import { contentDigest } from './digest.js';
import { fieldsForCreate, type EditableFields, type FieldsInput, type KnowledgeFile } from './fields.js';
import { isId, newId } from './ids.js';
import { normalizeText } from './text.js';

/** Checked fields in stored form, with `knowledge` as the files service would have pinned it. */
const stored = (input: FieldsInput, knowledge: KnowledgeFile[] = []): EditableFields => ({ ...fieldsForCreate(input), knowledgeFiles: knowledge });

describe('agent configs', () => {
  it('agent configs — ids are a prefix and 32 lowercase hex characters', () => {
    for (const prefix of ['agt', 'cfg', 'cht'] as const) {
      const id = newId(prefix);
      expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-f]{32}$`));
      expect(isId(prefix, id)).toBe(true);
    }
    expect(isId('agt', 'agt_XYZ')).toBe(false);
    expect(isId('agt', newId('cfg'))).toBe(false);
  });

  it('agent configs — normalizedName: NFKC, trimmed, white space collapsed, lower case', () => {
    expect(normalizeText('  Ｒｅｓｅａｒｃｈ \t  Helper\n ')).toBe('research helper');
    expect(buildConfig('agt_x', stored({ name: ' My   AGENT ' }), 't').normalizedName).toBe('my agent');
  });

  it('agent configs — the digest covers content only, independent of key order', () => {
    const fields = stored({ name: 'A', connectors: [{ type: 't', b: 1, a: [1, 2] }] });
    const reordered = { ...fields, connectors: [{ a: [1, 2], b: 1, type: 't' }] };
    const one = buildConfig('agt_1', fields, '2024-01-01T00:00:00.000Z');
    const two = buildConfig('agt_2', reordered, '2025-01-01T00:00:00.000Z');
    expect(one.contentDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(one.contentDigest).toBe(two.contentDigest);
    expect(one.configId).not.toBe(two.configId);
    expect(contentDigest({ ...fields, goal: 'other' })).not.toBe(one.contentDigest);
    expect(contentDigest(fields, 2)).not.toBe(one.contentDigest);
  });

  it('agent configs — the digest is SHA-256 of the RFC 8785 JSON of schemaVersion and the fields', async () => {
    const { createHash } = await import('node:crypto');
    const fields = stored({ name: 'Ä', skills: ['x'] });
    const expected =
      '{"connectors":null,"conversationStarters":[],"description":"","goal":"","instructions":"","knowledgeFiles":[],"name":"Ä",' +
      '"projectName":"Home","responseMode":"high","schemaVersion":1,"skills":["x"],"threadCreationMode":"explicit","threadManagementEnabled":true}';
    expect(contentDigest(fields)).toBe(createHash('sha256').update(expected, 'utf8').digest('hex'));
  });

  it('agent configs — sameAsCurrent compares submitted fields only; project names case-insensitively', () => {
    const current = stored({ name: 'A', goal: 'g', projectName: 'Research' });
    expect(sameAsCurrent({}, current)).toBe(true);
    expect(sameAsCurrent({ goal: 'g', projectName: 'RESEARCH' }, current)).toBe(true);
    expect(sameAsCurrent({ goal: 'h' }, current)).toBe(false);
    expect(sameAsCurrent({ skills: [] }, current)).toBe(false);
    expect(sameAsCurrent({ skills: null, conversationStarters: [] }, current)).toBe(true);
  });

  it('agent configs — knowledge files count in their stored form: the same path with other bytes is a change', () => {
    const file = { path: '/files/k.md', size: 3, sha256: 'a'.repeat(64), mimeType: 'text/markdown' };
    const changed = { ...file, size: 4, sha256: 'b'.repeat(64) };
    const current = stored({ name: 'A' }, [file]);
    expect(sameAsCurrent({ knowledgeFiles: [{ ...file }] }, current)).toBe(true);
    expect(sameAsCurrent({ knowledgeFiles: [changed] }, current)).toBe(false);
    expect(sameAsCurrent({ knowledgeFiles: [] }, current)).toBe(false);
    expect(contentDigest(stored({ name: 'A' }, [changed]))).not.toBe(contentDigest(current));
    expect(contentDigest(stored({ name: 'A' }, [{ ...file }]))).toBe(contentDigest(current));
  });
});
