import type { ErrorCode } from '@workspace/platform';
import { ConfigIdParams, DiffQuery, VersionDiff } from './agent-aliases.schemas.js';
import { AgentConfig } from './agents.schemas.js';
import { configJson } from './agents.json.js';

import * as ex from './agents.examples.js';
import { defineRoute, type RouteDef } from '../../api/route.js';
import type { AgentsClient } from '../../clients.js';

const BASE: ErrorCode[] = ['UNAUTHENTICATED', 'UNAVAILABLE'];

/** One configuration by id, and the JSON Patch between two (docs/api/agents.md#diffs). */
export function versionRoutes(agents: AgentsClient): RouteDef[] {
  const tag = 'Agents';
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/versions/{configId}',
      operationId: 'getAgentVersion',
      summary: 'One configuration, by id',
      description: 'Any config still kept: listed, pinned by a chat, or named by an alias; else 404 CONFIG_NOT_FOUND.',
      tag,
      params: ConfigIdParams,
      responses: { 200: { description: 'The configuration', schema: AgentConfig } },
      example: { params: ex.versionParams, response: ex.oneVersion },
      errors: ['AGENT_NOT_FOUND', 'CONFIG_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        res.json(configJson(await agents.getVersion({ agentId: params.agentId, configId: params.configId }, call)));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/versions/{configId}/diff',
      operationId: 'diffAgentVersions',
      summary: 'What changed: an RFC 6902 JSON Patch between two configurations',
      description:
        "The operations turn `from`'s editable fields into `configId`'s. `from` defaults to the config's parentConfigId; for an Agent's first config without `from` → 400 (details.field = from).",
      tag,
      params: ConfigIdParams,
      query: DiffQuery,
      responses: { 200: { description: 'The patch', schema: VersionDiff } },
      example: { params: ex.versionParams, response: ex.versionDiff },
      errors: ['INVALID_ARGUMENT', 'AGENT_NOT_FOUND', 'CONFIG_NOT_FOUND', ...BASE],
      handler: async ({ params, query, call }, res) => {
        const out = await agents.diffVersions({ agentId: params.agentId, configId: params.configId, from: query.from }, call);
        res.json({ from: out.from, to: out.to, operations: JSON.parse(out.operationsJson) as unknown[] });
      },
    }),
  ];
}
