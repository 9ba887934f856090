import { z } from 'zod';
import { CreateAgentBody } from './agents.schemas.js';

const { changeNote: _note, knowledgeFiles: _knowledge, ...editable } = CreateAgentBody.shape;

const StoredKnowledge = z.object({
  path: z.string().min(1).max(900),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  mimeType: z.string().max(255),
});

/** A configuration as an export writes it: every field (CONTRACT §12); the agents service checks the rest. */
const ArchivedConfig = z.object({
  ...editable,
  configId: z.string().max(100),
  createdAt: z.string().max(64),
  changeNote: z.string().max(4_000).optional(),
  parentConfigId: z.string().max(100).nullable().optional(),
  knowledgeFiles: z.array(StoredKnowledge).max(20).optional(),
});

/** `agent.json` of an Agent archive. Fields an export writes for information (ids, digests) are not read back. */
export const AgentArchiveDocument = z.object({
  format: z.literal('workspace.agent/v1'),
  exportedAt: z.string().optional(),
  configs: z.array(ArchivedConfig).min(1).max(1_000).describe('oldest first'),
  aliases: z.array(z.object({ alias: z.string().max(64), configId: z.string().max(100), description: z.string().max(4_000).optional() })).max(100).optional(),
});

export type ArchivedAgent = z.output<typeof AgentArchiveDocument>;

export const ImportForm = z
  .object({
    projectName: z.string().optional().describe('overrides every configuration\'s project; must come before `file`'),
    file: z.string().describe('the ZIP an export made (agent.json + knowledge/<sha256>)'),
  })
  .meta({ id: 'ImportAgentForm' });
