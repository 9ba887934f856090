import { describe, expect, it } from 'vitest';
import { parseAgentDocument } from './agent-json.js';

const cfg = (n: number) => `cfg_${String(n).padStart(32, '0')}`;
const config = (n: number, over: Record<string, unknown> = {}) => ({ configId: cfg(n), parentConfigId: n > 1 ? cfg(n - 1) : null, name: `v${n}`, createdAt: new Date(Date.UTC(2025, 0, n)).toISOString(), ...over });
const doc = (configs: unknown[], aliases: unknown[] = []) => JSON.stringify({ format: 'workspace.agent/v1', exportedAt: '2025-02-01T00:00:00.000Z', configs, aliases });
const refusal = (text: string) => {
  try {
    parseAgentDocument(text);
  } catch (err) {
    const e = err as { code: string; details?: { field?: string }; message: string };
    return { code: e.code, field: e.details?.field, message: e.message };
  }
  throw new Error('accepted');
};

describe('agent.json', () => {
  it('agent.json — what an export writes is taken (its informational fields too), with a createdAt up to 5 minutes ahead', () => {
    const kb = { path: '/files/kb/notes.md', size: 3, sha256: 'a'.repeat(64), mimeType: 'text/markdown' };
    const exported = { ...config(1), schemaVersion: 1, agentId: `agt_${'1'.repeat(32)}`, normalizedName: 'v1', contentDigest: 'b'.repeat(64), changeNote: '', knowledgeFiles: [kb] };
    const soon = new Date(Date.now() + 4 * 60_000).toISOString();
    const parsed = parseAgentDocument(doc([exported, config(2, { createdAt: soon })], [{ alias: 'prod', configId: cfg(1), description: 'live' }]));
    expect(parsed.configs.map((c) => c.configId)).toEqual([cfg(1), cfg(2)]);
    expect(parsed.configs[0]!.knowledgeFiles).toEqual([kb]);
  });

  it('agent.json — every refusal names its place: the rules of create and PATCH, the path rules, the lineage, the clock', () => {
    const kb = (path: string) => ({ knowledgeFiles: [{ path, size: 1, sha256: 'a'.repeat(64), mimeType: 'text/plain' }] });
    const cases: [string, string][] = [
      [doc([config(1, { name: ' ' })]), 'configs[0].name'],
      [doc([config(1, { changeNote: 'x'.repeat(1_001) })]), 'configs[0].changeNote'],
      [doc([config(1, { changeNote: '\ud800' })]), 'configs[0].changeNote'],
      [doc([config(1, { conversationStarters: ['ok', '\udfff'] })]), 'configs[0].conversationStarters[1]'],
      [doc([config(1, { connectors: [{ type: 'web', deep: '\ud800' }] })]), 'configs[0].connectors[0]'],
      [doc([config(1, kb('../../etc/passwd'))]), 'configs[0].knowledgeFiles[0].path'],
      [doc([config(1, kb('/files/a//b'))]), 'configs[0].knowledgeFiles[0].path'],
      [doc([config(1, kb('/files/dir/'))]), 'configs[0].knowledgeFiles[0].path'],
      [doc([config(1, kb(`/files/${'a'.repeat(256)}`))]), 'configs[0].knowledgeFiles[0].path'],
      [doc([config(1, { parentConfigId: cfg(1) })]), 'configs[0].parentConfigId'],
      [doc([config(1, { parentConfigId: cfg(3) }), config(2), config(3)]), 'configs[0].parentConfigId'],
      [doc([config(1), config(1)]), 'configs[1].configId'],
      [doc([config(1, { createdAt: new Date(Date.now() + 6 * 60_000).toISOString() })]), 'configs[0].createdAt'],
      [doc([config(1, { createdAt: '2025-01-01' })]), 'configs[0].createdAt'],
      [doc([config(1, { colour: 'red' })]), 'configs[0].colour'],
      [doc([config(1)], [{ alias: 'prod', configId: cfg(1), description: 'x'.repeat(1_001) }]), 'aliases[0].description'],
      [doc([config(1)]).replace('"format"', '"extra":1,"format"'), 'extra'],
      ['[]', 'file'],
      ['{"format":', 'file'],
    ];
    for (const [text, field] of cases) expect(refusal(text), field).toMatchObject({ code: 'INVALID_ARGUMENT', field });
  });
});
