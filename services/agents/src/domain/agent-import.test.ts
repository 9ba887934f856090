import { describe, expect, it } from 'vitest';
import { AgentImport, type ImportedConfig, type NewImportedAgent } from './agent-import.js';
import { contentDigest } from './digest.js';
import { DEFAULTS } from './fields.js';
import type { CreateAgentOutcome, KnowledgeStore, ProjectDirectory, StagedKnowledge } from './ports.js';

const cfg = (n: number) => `cfg_${String(n).padStart(32, '0')}`;
const scope = { userId: 'u1' };
const projects: ProjectDirectory = { resolve: async (_s, name) => (name.toLowerCase() === 'home' ? 'Home' : name.toLowerCase() === 'research' ? 'Research' : Promise.reject(new Error('PROJECT_NOT_FOUND'))) };

function harness(outcome: CreateAgentOutcome = { status: 'created' }) {
  const written: NewImportedAgent[] = [];
  const pinned: StagedKnowledge[][] = [];
  const unpinned: string[] = [];
  const knowledge: KnowledgeStore = { pin: async () => [], pinStaged: async (_s, _a, files) => void pinned.push(files), unpinAll: async (_s, agentId) => void unpinned.push(agentId) };
  const importer = new AgentImport({ repo: { create: async (r) => (written.push(r), outcome) }, projects, knowledge, maxAliases: 20, maxConfigs: 3, maxAgents: 5 });
  return { importer, written, pinned, unpinned };
}

const config = (n: number, parent: number | null, fields: Record<string, unknown> = {}): ImportedConfig => ({
  configId: cfg(n),
  parentConfigId: parent === null ? null : cfg(parent),
  changeNote: `note ${n}`,
  createdAt: new Date(Date.UTC(2026, 0, n)).toISOString(),
  fields: { ...DEFAULTS, name: `v${n}`, ...fields },
});

describe('agent import — rules', () => {
  it('agent import — a createdAt up to 5 minutes ahead (clock skew) and a valid knowledge path are taken', async () => {
    const { importer, written } = harness();
    const kb = { path: '/files/kb/notes.md', size: 1, sha256: 'a'.repeat(64), mimeType: 'text/markdown' };
    await importer.import(scope, { configs: [{ ...config(1, null, { knowledgeFiles: [kb] }), createdAt: new Date(Date.now() + 4 * 60_000).toISOString() }], aliases: [], knowledge: [{ uploadId: 'up_1', sha256: kb.sha256, size: 1 }] });
    expect(written[0]!.configs[0]!.knowledgeFiles).toEqual([kb]);
  });

  it('agent import — new ids in the same order, lineage mapped (a reclaimed parent becomes null), notes, times and digests kept', async () => {
    const { importer, written } = harness();
    await importer.import(scope, { configs: [config(2, 1), config(3, 2), config(4, 3)], aliases: [{ alias: 'prod', configId: cfg(3), description: 'd' }], knowledge: [] });
    const [w] = written;
    expect(w!.configs.map((c) => c.name)).toEqual(['v2', 'v3', 'v4']);
    expect(w!.configs.map((c) => c.changeNote)).toEqual(['note 2', 'note 3', 'note 4']);
    expect(w!.configs.map((c) => c.createdAt)).toEqual([config(2, 1).createdAt, config(3, 2).createdAt, config(4, 3).createdAt]);
    expect(w!.configs.every((c) => ![cfg(2), cfg(3), cfg(4)].includes(c.configId))).toBe(true);
    expect(w!.configs.map((c) => c.parentConfigId)).toEqual([null, w!.configs[0]!.configId, w!.configs[1]!.configId]);
    expect(w!.configs[0]!.contentDigest).toBe(contentDigest({ ...DEFAULTS, name: 'v2' }));
    expect(w!.agent.currentConfigId).toBe(w!.configs[2]!.configId);
    expect(w!.aliases).toEqual([expect.objectContaining({ alias: 'prod', configId: w!.configs[1]!.configId, description: 'd' })]);
  });

  it('agent import — bad fields, duplicate ids, unknown alias targets and missing knowledge bytes are 400 with the place, and nothing is written', async () => {
    const { importer, written, pinned } = harness();
    const cases: [Parameters<AgentImport['import']>[1], string][] = [
      [{ configs: [config(1, null, { responseMode: 'loud' })], aliases: [], knowledge: [] }, 'configs[0].responseMode'],
      [{ configs: [config(1, null), config(1, null)], aliases: [], knowledge: [] }, 'configs[1].configId'],
      [{ configs: [config(1, null)], aliases: [{ alias: 'prod', configId: cfg(9), description: '' }], knowledge: [] }, 'aliases[0].configId'],
      [{ configs: [config(1, null)], aliases: [{ alias: 'Prod', configId: cfg(1), description: '' }], knowledge: [] }, 'aliases[0].alias'],
      [{ configs: [{ ...config(1, null), createdAt: 'yesterday' }], aliases: [], knowledge: [] }, 'configs[0].createdAt'],
      [{ configs: [config(1, null, { knowledgeFiles: [{ path: '/files/a', size: 1, sha256: 'a'.repeat(64), mimeType: 'text/plain' }] })], aliases: [], knowledge: [] }, 'configs[0].knowledgeFiles[0].sha256'],
      [{ configs: [], aliases: [], knowledge: [] }, 'configs'],
      [{ configs: [config(1, 1)], aliases: [], knowledge: [] }, 'configs[0].parentConfigId'],
      [{ configs: [config(1, 2), config(2, 1)], aliases: [], knowledge: [] }, 'configs[0].parentConfigId'],
      [{ configs: [config(1, null), config(2, 3), config(3, 2)], aliases: [], knowledge: [] }, 'configs[1].parentConfigId'],
      [{ configs: [{ ...config(1, null), createdAt: new Date(Date.now() + 6 * 60_000).toISOString() }], aliases: [], knowledge: [] }, 'configs[0].createdAt'],
      [{ configs: [config(1, null), config(2, 1), config(3, 2), config(4, 3)], aliases: [], knowledge: [] }, 'configs'],
      ...['../../etc/passwd', '/files/a/../b', '/files', '/files/a/', '/filesx/a', '/files/a\\b'].map(
        (path): [Parameters<AgentImport['import']>[1], string] => [
          { configs: [config(1, null, { knowledgeFiles: [{ path, size: 1, sha256: 'a'.repeat(64), mimeType: 'text/plain' }] })], aliases: [], knowledge: [{ uploadId: 'up_1', sha256: 'a'.repeat(64), size: 1 }] },
          'configs[0].knowledgeFiles[0].path',
        ],
      ),
    ];
    for (const [input, field] of cases) await expect(importer.import(scope, input), field).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    expect(written).toEqual([]);
    expect(pinned).toEqual([]);
  });

  it('agent import — refused by MAX_AGENTS, or replayed by its idempotency key, after its knowledge was pinned: the pins of the Agent that will not exist go', async () => {
    const kb = { path: '/files/kb/notes.md', size: 1, sha256: 'a'.repeat(64), mimeType: 'text/markdown' };
    const input = { configs: [config(1, null, { knowledgeFiles: [kb] })], aliases: [], knowledge: [{ uploadId: 'up_1', sha256: kb.sha256, size: 1 }] };
    const refused = harness({ status: 'quota', used: 5 });
    await expect(refused.importer.import(scope, input)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_AGENTS' } });
    expect(refused.unpinned).toEqual([refused.written[0]!.agent.agentId]);
    const replayed = harness({ status: 'exists', agentId: 'agt_earlier' });
    expect(await replayed.importer.import(scope, input)).toEqual({ agentId: 'agt_earlier', created: false });
    expect(replayed.unpinned).toEqual([replayed.written[0]!.agent.agentId]);
    const created = harness();
    await created.importer.import(scope, input);
    expect(created.unpinned).toEqual([]);
  });

  it('agent import — projectName overrides every config and the digests follow the content', async () => {
    const { importer, written } = harness();
    await importer.import(scope, { configs: [config(1, null), config(2, 1)], aliases: [], projectName: 'research', knowledge: [] });
    expect(written[0]!.configs.map((c) => c.projectName)).toEqual(['Research', 'Research']);
    expect(written[0]!.configs[0]!.contentDigest).toBe(contentDigest({ ...DEFAULTS, name: 'v1', projectName: 'Research' }));
  });
});
