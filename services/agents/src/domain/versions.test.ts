import jsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { buildConfig } from './configs.js';
import { DEFAULTS, editableOf } from './fields.js';
import { diffFields } from './versions.js';

describe('versions — diff', () => {
  it('versions — applying the patch to from yields to, field for field', () => {
    const from = buildConfig('agt_' + '0'.repeat(32), { ...DEFAULTS, name: 'A', conversationStarters: ['x', 'y', 'z'], skills: null, connectors: [{ type: 'web', a: { b: 1 } }] }, '2026-01-01T00:00:00.000Z');
    const to = buildConfig(from.agentId, { ...DEFAULTS, name: 'B', conversationStarters: ['y'], skills: ['s'], connectors: [{ type: 'web', a: { c: 2 } }], knowledgeFiles: [{ path: '/files/a', size: 1, sha256: 'f'.repeat(64), mimeType: 'text/plain' }] }, '2026-01-02T00:00:00.000Z', { changeNote: 'n', parentConfigId: from.configId });
    const ops = diffFields(from, to);
    expect(ops.length).toBeGreaterThan(0);
    const applied = jsonPatch.applyPatch(structuredClone(editableOf(from)), ops, true, true).newDocument;
    expect(applied).toEqual(editableOf(to));
    expect(diffFields(to, to)).toEqual([]);
  });

  it('versions — change notes and lineage stay out of the digest', () => {
    const fields = { ...DEFAULTS, name: 'A' };
    const a = buildConfig('agt_' + '0'.repeat(32), fields, '2026-01-01T00:00:00.000Z');
    const b = buildConfig(a.agentId, fields, '2026-01-02T00:00:00.000Z', { changeNote: 'why', parentConfigId: a.configId });
    expect(b.contentDigest).toBe(a.contentDigest);
    expect([a.changeNote, a.parentConfigId, b.changeNote, b.parentConfigId]).toEqual(['', null, 'why', a.configId]);
  });
});
