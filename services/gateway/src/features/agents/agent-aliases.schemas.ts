import { z } from 'zod';
import { AgentConfig } from './agents.schemas.js';
import { timestamp, wellFormed } from '../../api/schemas.js';

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

export const RouteEntry = z
  .object({
    configId: z.string().min(1).max(100).describe('a kept config of this Agent'),
    weight: z.number().int().min(1).max(99).describe('its share of the chats, in percent'),
  })
  .strict()
  .meta({ id: 'AliasRouteEntry' });

/** 2–5 entries; the gateway checks the shape, the agents service that the configs are distinct and the weights sum to 100. */
export const Routing = z
  .array(RouteEntry)
  .min(2)
  .max(5)
  .describe('2–5 distinct kept configs with integer weights 1–99 that sum to 100; chats through the alias are split between them (docs: #rollout)');

/** The fields of a PUT, without the "one of configId and routing" rule (an archive reuses them). */
export const aliasTargetFields = {
  configId: z.string().min(1).max(100).optional().describe('a kept config of this Agent; required unless `routing` is sent (not both)'),
  routing: Routing.optional(),
  description: wellFormed(z.string().max(1_000)).optional().describe('default ""; at most 1,000 characters'),
};

export const PutAliasBody = z
  .object(aliasTargetFields)
  .strict()
  .superRefine((value, ctx) => {
    if (value.configId !== undefined && value.routing !== undefined) ctx.addIssue({ code: 'custom', path: ['routing'], message: 'send configId or routing, not both' });
    if (value.configId === undefined && value.routing === undefined) ctx.addIssue({ code: 'custom', path: ['configId'], message: 'is required (or send routing)' });
  })
  .meta({
    id: 'PutAliasRequest',
    examples: [
      { configId: 'cfg_9a…', description: 'what customers talk to' },
      { routing: [{ configId: 'cfg_9a…', weight: 90 }, { configId: 'cfg_0f…', weight: 10 }], description: 'canary: 10% on the new config' },
    ],
  });

export const Alias = z
  .object({
    alias: z.string(),
    agentId: z.string(),
    configId: z.string().describe('the config it names; for a routed alias the entry of greatest weight (the first on ties)'),
    routing: z.array(RouteEntry).nullable().describe('null for a plain alias; the entries as sent, in their order, for a routed one'),
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
      .array(
        z.object({
          configId: z.string(),
          routing: z.array(RouteEntry).nullable().describe('the routing of that period; null when the alias named one config'),
          from: timestamp,
          until: timestamp.nullable().describe('null for the present'),
        }),
      )
      .describe('newest first'),
  })
  .meta({ id: 'AliasHistory' });

export const AliasStats = z
  .object({
    alias: z.string(),
    since: timestamp.describe('when the current period began: the last PUT that changed the routing (or, for a plain alias, its config)'),
    configs: z
      .array(z.object({ configId: z.string(), weight: z.number().int().describe('100 for a plain alias'), chats: z.number().int().describe('chats started through the alias on this config since `since`') }))
      .describe('the routing entries in their order; a plain alias has one, its config'),
  })
  .meta({ id: 'AliasStats' });
