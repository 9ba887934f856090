import { z } from 'zod';
import { AgentConfig } from './agents.schemas.js';
import { timestamp, wellFormed } from './common.js';

export const ConfigIdParams = z.object({ agentId: z.string(), configId: z.string().describe('`cfg_` + 32 lowercase hex') }).strict();
export const AliasParams = z.object({ agentId: z.string(), alias: z.string().describe('1–64 of a–z 0–9 - _, starting with a letter or digit') }).strict();

export const DiffQuery = z
  .object({ from: z.string().max(100).optional().describe("the config to diff from; default: the config's parentConfigId") })
  .strict();

export const JsonPatchOperation = z
  .object({
    op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
    path: z.string().describe('a JSON Pointer (RFC 6901) into the editable fields'),
    value: z.unknown().optional(),
    from: z.string().optional(),
  })
  .meta({ id: 'JsonPatchOperation' });

export const VersionDiff = z
  .object({
    from: z.string(),
    to: z.string(),
    operations: z.array(JsonPatchOperation).describe("RFC 6902: applied to from's editable fields, it yields to's exactly"),
  })
  .meta({ id: 'VersionDiff', example: { from: 'cfg_0f…', to: 'cfg_9a…', operations: [{ op: 'replace', path: '/instructions', value: 'Answer briefly.' }] } });

export const PutAliasBody = z
  .object({
    configId: z.string().min(1).max(100).describe('a kept config of this Agent'),
    description: wellFormed(z.string().max(1_000)).optional().describe('default ""; at most 1,000 characters'),
  })
  .strict()
  .meta({ id: 'PutAliasRequest', example: { configId: 'cfg_9a…', description: 'what customers talk to' } });

export const Alias = z
  .object({
    alias: z.string(),
    agentId: z.string(),
    configId: z.string(),
    description: z.string(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Alias' });

export const AliasWithConfig = Alias.extend({ config: AgentConfig.describe('the config the alias names') }).meta({ id: 'AliasWithConfig' });
export const AliasList = z.object({ aliases: z.array(Alias).describe('sorted by name') }).meta({ id: 'AliasList' });
export const AliasHistory = z
  .object({
    history: z
      .array(z.object({ configId: z.string(), from: timestamp, until: timestamp.nullable().describe('null for the present') }))
      .describe('newest first'),
  })
  .meta({ id: 'AliasHistory' });
