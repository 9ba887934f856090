import type { Response } from 'express';
import { errors, type ErrorCode } from '@workspace/platform';
import type { Alias as AliasProto } from '@workspace/proto/workspace/agents/v1/agents';
import { parseIfMatch } from '../../api/if-match.js';
import { Alias, AliasHistory, AliasList, AliasParams, AliasStats, AliasWithConfig, PutAliasBody } from './agent-aliases.schemas.js';
import { AgentIdParams, ErrorEnvelope } from '../../api/schemas.js';
import { configJson, routingJson } from './agents.json.js';

import * as ex from './agents.examples.js';
import { defineRoute, type RouteDef } from '../../api/route.js';
import type { AgentsClient } from '../../clients.js';

const BASE: ErrorCode[] = ['UNAUTHENTICATED', 'UNAVAILABLE'];
const ETAG_DOC = { ETag: '"<configId>": the config the alias names; send it in If-Match to move the alias only from there' };
const PATH = '/v1/agents/{agentId}/aliases/{alias}';

export function aliasJson(a: AliasProto) {
  return { alias: a.alias, agentId: a.agentId, configId: a.configId, routing: routingJson(a.routing), description: a.description, createdAt: a.createdAt, updatedAt: a.updatedAt };
}

function sendAlias(res: Response, body: { configId: string } & Record<string, unknown>, status = 200): void {
  res.setHeader('ETag', `"${body.configId}"`);
  res.status(status).json(body);
}

/** Aliases name a config of an Agent, so what runs can be promoted and rolled back (docs/api/agents.md#aliases). */
export function aliasRoutes(agents: AgentsClient): RouteDef[] {
  const tag = 'Agents';
  return [
    defineRoute({
      method: 'put',
      path: PATH,
      operationId: 'putAlias',
      summary: 'Create an alias, or move it to another configuration (or split its chats between several)',
      description:
        '201 when new, 200 when it existed. Send `configId` (one config) or `routing` (2–5 distinct kept configs with integer weights 1–99 that sum to 100: chats through the alias are split between them), not both (400). ' +
        'A routed alias answers `routing` as sent and `configId` = the entry of greatest weight (the first on ties); a plain one `routing: null`. ' +
        '`If-Match: "<configId>"` makes the move conditional: 412 PRECONDITION_FAILED (details.currentConfigId) when the alias names another config. ' +
        'Every config the alias names or routes to is never reclaimed by retention. A PUT that changes the config or the routing (weights alone included) starts a new history period and resets the stats. ' +
        'At most MAX_ALIASES_PER_AGENT (default 20) per Agent: one more → 403 QUOTA_EXCEEDED.',
      tag,
      params: AliasParams,
      body: PutAliasBody,
      example: { params: ex.aliasParams, body: ex.putAliasBody, response: ex.alias },
      responses: {
        200: { description: 'Moved (or unchanged)', schema: Alias, headers: ETAG_DOC },
        201: { description: 'Created', schema: Alias, headers: { ...ETAG_DOC, Location: 'the alias' } },
        412: { description: 'PRECONDITION_FAILED: the alias names another config (details.currentConfigId)', schema: ErrorEnvelope },
      },
      errors: ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'AGENT_NOT_FOUND', 'CONFIG_NOT_FOUND', 'PRECONDITION_FAILED', 'QUOTA_EXCEEDED', ...BASE],
      handler: async ({ params, body, call, req }, res) => {
        const ifMatch = parseIfMatch(req.get('if-match'));
        const out = await agents.putAlias(
          { agentId: params.agentId, alias: params.alias, configId: body.configId ?? '', routing: body.routing ?? [], description: body.description, ifMatch },
          call,
        );
        if (!out.alias) throw errors.internal(new Error('putAlias without alias'));
        if (out.created) res.setHeader('Location', `/v1/agents/${out.alias.agentId}/aliases/${out.alias.alias}`);
        sendAlias(res, aliasJson(out.alias), out.created ? 201 : 200);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/aliases',
      operationId: 'listAliases',
      summary: "The Agent's aliases, sorted by name",
      tag,
      params: AgentIdParams,
      responses: { 200: { description: 'The aliases', schema: AliasList } },
      example: { params: ex.agentParams, response: { aliases: [ex.alias] } },
      errors: ['AGENT_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.listAliases({ agentId: params.agentId }, call);
        res.json({ aliases: out.aliases.map(aliasJson) });
      },
    }),
    defineRoute({
      method: 'get',
      path: PATH,
      operationId: 'getAlias',
      summary: 'An alias with the configuration it names',
      tag,
      params: AliasParams,
      responses: { 200: { description: 'The alias', schema: AliasWithConfig, headers: ETAG_DOC } },
      example: { params: ex.aliasParams, response: ex.aliasWithConfig },
      errors: ['AGENT_NOT_FOUND', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.getAlias({ agentId: params.agentId, alias: params.alias }, call);
        if (!out.alias || !out.config) throw errors.internal(new Error('getAlias without alias or config'));
        sendAlias(res, { ...aliasJson(out.alias), config: configJson(out.config) });
      },
    }),
    defineRoute({
      method: 'get',
      path: `${PATH}/history`,
      operationId: 'getAliasHistory',
      summary: 'Where the alias pointed, newest first',
      description:
        'Each entry is a period `{configId, routing, from, until}`: a PUT that changed the config or the routing (weights alone included) began it; `routing` is null for a plain alias and `until` null for the present. The newest 100 periods are kept.',
      tag,
      params: AliasParams,
      responses: { 200: { description: 'The history', schema: AliasHistory } },
      example: { params: ex.aliasParams, response: ex.aliasHistory },
      errors: ['AGENT_NOT_FOUND', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.getAliasHistory({ agentId: params.agentId, alias: params.alias }, call);
        res.json({ history: out.history.map((h) => ({ configId: h.configId, routing: routingJson(h.routing), from: h.from, until: h.until ?? null })) });
      },
    }),
    defineRoute({
      method: 'get',
      path: `${PATH}/stats`,
      operationId: 'getAliasStats',
      summary: 'Chats started through the alias per configuration, since its routing was last set',
      description:
        '`since` is when the current period began: the last PUT that changed the routing (or, for a plain alias, the config it names); a PUT that changes neither (a new description) keeps the counts. ' +
        '`configs` lists the routing entries in their order with their weights; a plain alias answers its one config with weight 100. Chats started through the alias by schedules and triggers count too.',
      tag,
      params: AliasParams,
      responses: { 200: { description: 'The counts', schema: AliasStats } },
      example: { params: ex.aliasParams, response: ex.aliasStats },
      errors: ['AGENT_NOT_FOUND', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.getAliasStats({ agentId: params.agentId, alias: params.alias }, call);
        res.json({ alias: out.alias, since: out.since, configs: out.configs.map((c) => ({ configId: c.configId, weight: c.weight, chats: Number(c.chats) })) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: PATH,
      operationId: 'deleteAlias',
      summary: 'Delete an alias',
      description: 'Schedules and triggers that run through it start no chat from then on (logged and counted).',
      tag,
      params: AliasParams,
      responses: { 204: { description: 'Deleted' } },
      example: { params: ex.aliasParams },
      errors: ['AGENT_NOT_FOUND', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        await agents.deleteAlias({ agentId: params.agentId, alias: params.alias }, call);
        res.status(204).end();
      },
    }),
  ];
}
