import { isAppError, lineageCycle, parsePath } from '@workspace/platform';
import { z } from 'zod';
import { aliasTargetFields } from '../agent-aliases.schemas.js';
import { CreateAgentBody, MAX_KNOWLEDGE_FILES } from '../agents.schemas.js';
import { wellFormed } from '../../../api/schemas.js';

/**
 * `agent.json` of an Agent archive, held to the rules of the API itself: a configuration's
 * fields are validated by the very schema of create (and PATCH, which shares it), so an import
 * takes nothing that they would refuse. Only what an archive adds is defined here.
 */

/** Configs one archive may carry at most, whatever CONFIG_RETENTION is (the agents service holds an import to that). */
export const MAX_ARCHIVED_CONFIGS = 1_000;
/**
 * How far a `createdAt` may lie ahead of this server's clock: the clocks of the exporting and
 * importing deployments may differ a little; a time further ahead is refused.
 */
export const CREATED_AT_SKEW_MS = 5 * 60_000;

const CONFIG_ID = /^cfg_[0-9a-f]{32}$/;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const configId = z.string().regex(CONFIG_ID, 'must be cfg_ followed by 32 lowercase hex digits');

/** A workspace file path under the path rules (the parser the files service applies), in its stored form. */
const storedPath = z.string().superRefine((value, ctx) => {
  try {
    const parsed = parsePath(value);
    if (parsed.segments.length === 0 || parsed.path !== value) ctx.addIssue({ code: 'custom', message: 'must name a file: /files/… without a trailing /' });
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: isAppError(err) ? err.message : 'is not a valid workspace path' });
  }
});

const StoredKnowledge = z
  .object({
    path: storedPath,
    size: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'),
    mimeType: wellFormed(z.string().max(255)),
  })
  .strict();

const createdAt = z.string().superRefine((value, ctx) => {
  if (!ISO_MS.test(value) || Number.isNaN(Date.parse(value)) || new Date(value).toISOString() !== value) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 UTC timestamp with milliseconds' });
  } else if (Date.parse(value) > Date.now() + CREATED_AT_SKEW_MS) {
    ctx.addIssue({ code: 'custom', message: `must not lie in the future (more than ${CREATED_AT_SKEW_MS / 60_000} minutes ahead of the server's clock)` });
  }
});

const { knowledgeFiles: _submitted, ...createFields } = CreateAgentBody.shape;

/** A configuration as an export writes it: the fields of create, its lineage, and the knowledge in stored form. */
const ArchivedConfig = z
  .object({
    ...createFields,
    knowledgeFiles: z.array(StoredKnowledge).max(MAX_KNOWLEDGE_FILES).optional(),
    configId,
    parentConfigId: configId.nullable().optional(),
    createdAt,
    // Written by an export for information; not read back (the import computes its own).
    schemaVersion: z.number().int().optional(),
    agentId: z.string().optional(),
    normalizedName: z.string().optional(),
    contentDigest: z.string().optional(),
  })
  .strict();

/** An alias as an export writes it: its name, the config it names, and its routing (null for a plain alias). */
const ArchivedAlias = z
  .object({ alias: z.string().max(64), ...aliasTargetFields, configId: z.string().min(1).max(100), routing: aliasTargetFields.routing.unwrap().nullable().optional() })
  .strict();

/** `agent.json` of an Agent archive. */
export const AgentArchiveDocument = z
  .object({
    format: z.literal('workspace.agent/v1'),
    exportedAt: z.string().optional(),
    configs: z.array(ArchivedConfig).min(1).max(MAX_ARCHIVED_CONFIGS).describe('oldest first'),
    aliases: z.array(ArchivedAlias).max(100).optional(),
  })
  .strict()
  .superRefine((document, ctx) => {
    const seen = new Set<string>();
    document.configs.forEach((c, i) => {
      if (seen.has(c.configId)) ctx.addIssue({ code: 'custom', path: ['configs', i, 'configId'], message: 'appears twice' });
      seen.add(c.configId);
    });
    const cycle = lineageCycle(document.configs);
    if (cycle !== undefined) ctx.addIssue({ code: 'custom', path: ['configs', cycle, 'parentConfigId'], message: 'leads back to this configuration (the lineage must not be a cycle)' });
  });

export type ArchivedAgent = z.output<typeof AgentArchiveDocument>;

export const ImportForm = z
  .object({
    projectName: z.string().optional().describe('overrides every configuration\'s project; must come before `file`'),
    file: z.string().describe('the ZIP an export made (agent.json + knowledge/<sha256>)'),
  })
  .meta({ id: 'ImportAgentForm' });
