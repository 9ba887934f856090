import type { Response } from 'express';
import { errors, isAppError, type ErrorCode } from '@workspace/platform';
import type { Agent as AgentProto } from '@workspace/proto/workspace/agents/v1/agents';
import { sendError } from '../../edge/errors.js';
import { parseIfMatch } from '../../api/if-match.js';
import {
  Agent,
  AgentList,
  AgentVersions,
  Chat,
  ChatIdParams,
  ChatList,
  ChatWithConfig,
  CreateAgentBody,
  CreateChatBody,
  ListAgentsQuery,
  UpdateAgentBody,
} from './agents.schemas.js';
import { AgentIdParams, ErrorEnvelope } from '../../api/schemas.js';
import { agentJson, chatJson, configJson, fieldsToProto, listItemJson } from './agents.json.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import { withScheduleSummaries } from './schedule-summaries.js';
import * as ex from './agents.examples.js';
import { IF_MATCH } from '../../api/request-headers.js';
import type { AutomationsClient, AgentsClient } from '../../clients.js';

const ETAG_DOC = { ETag: '"<currentConfigId>": the config this representation is based on; send it back in If-Match to update' };
const BASE: ErrorCode[] = ['UNAUTHENTICATED', 'UNAVAILABLE'];
const WITH_BODY: ErrorCode[] = ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
/** Writing a config copies its knowledge files (details.field `knowledgeFiles[i].path`). */
const KNOWLEDGE: ErrorCode[] = ['INVALID_PATH', 'FILE_NOT_FOUND', 'IS_A_DIRECTORY'];
/**
 * A write that copies knowledge files reads every byte of them: it gets longer than the
 * default deadline, and longer than the agents service's own for the copy (60 s by default).
 */
const KNOWLEDGE_DEADLINE_MS = 75_000;

function withKnowledgeDeadline<C extends object>(call: C, knowledgeFiles: readonly unknown[] | undefined): C {
  return knowledgeFiles && knowledgeFiles.length > 0 ? { ...call, deadlineMs: KNOWLEDGE_DEADLINE_MS } : call;
}

/** An Agent response: the record, and its current config id as a strong ETag. */
function sendAgent(res: Response, agent: AgentProto, status = 200): void {
  res.setHeader('ETag', `"${agent.currentConfigId}"`);
  res.status(status).json(agentJson(agent));
}

/** The base of a PATCH: `baseConfigId`, or the If-Match tag; both must agree when both are sent. */
function baseOf(bodyBase: string | undefined, ifMatch: string | undefined): string {
  if (bodyBase !== undefined && ifMatch !== undefined && bodyBase !== ifMatch) {
    throw errors.invalidArgument('baseConfigId and If-Match name different configs', 'If-Match');
  }
  const base = bodyBase ?? ifMatch;
  if (base === undefined) throw errors.invalidArgument('baseConfigId is required (or send If-Match)', 'baseConfigId');
  return base;
}

/** `automations` (optional) fills each list item's activeScheduleCount and nextRunAt. */
export function agentsRoutes(agents: AgentsClient, automations?: AutomationsClient): RouteDef[] {
  const tag = 'Agents';
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agents',
      operationId: 'listAgents',
      summary: 'List Agents, newest first',
      description: 'Sorted by createdAt descending, then agentId descending. `pagination.total` counts the matches; `pages` = ceil(total / limit).',
      tag,
      query: ListAgentsQuery,
      example: { query: { page: 1, limit: 20, q: 'triage' }, response: ex.agentList },
      responses: { 200: { description: 'A page of Agents', schema: AgentList } },
      errors: ['INVALID_ARGUMENT', ...BASE],
      handler: async ({ query, call }, res) => {
        const out = await agents.listAgents({ page: query.page ?? 1, limit: query.limit ?? 20, q: query.q }, call);
        const items = await withScheduleSummaries(automations, out.agents.map(listItemJson), call);
        res.json({ agents: items, pagination: { page: out.page, limit: out.limit, total: out.total, pages: out.pages } });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agents',
      operationId: 'createAgent',
      summary: 'Create an Agent with its first configuration',
      description: 'A user has at most MAX_AGENTS Agents (default 1,000): one more → 403 QUOTA_EXCEEDED.',
      tag,
      idempotent: true,
      body: CreateAgentBody,
      example: { body: ex.createAgentBody, response: ex.agent },
      responses: { 201: { description: 'Created', schema: Agent, headers: { ...ETAG_DOC, Location: 'the new Agent' } } },
      errors: [...WITH_BODY, 'PROJECT_NOT_FOUND', 'PROJECT_ARCHIVED', 'QUOTA_EXCEEDED', ...KNOWLEDGE, ...BASE],
      handler: async ({ body, call, idempotencyKey }, res) => {
        // The service keeps the key too: a create retried after a lost answer (a 503) makes one Agent.
        const { changeNote, ...fields } = body;
        const agent = await agents.createAgent({ fields: fieldsToProto(fields), idempotencyKey, changeNote }, withKnowledgeDeadline(call, body.knowledgeFiles));
        res.setHeader('Location', `/v1/agents/${agent.agentId}`);
        sendAgent(res, agent, 201);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}',
      operationId: 'getAgent',
      summary: 'An Agent with its current configuration',
      tag,
      params: AgentIdParams,
      example: { params: ex.agentParams, response: ex.agent },
      responses: { 200: { description: 'The Agent', schema: Agent, headers: ETAG_DOC } },
      errors: ['AGENT_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => sendAgent(res, await agents.getAgent({ agentId: params.agentId }, call)),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/agents/{agentId}',
      operationId: 'updateAgent',
      summary: 'Publish a new configuration (optimistic concurrency)',
      description:
        'Checked in this order: (1) the submitted fields equal the current values → 200 with the current config, no new version; ' +
        '(2) the base is not the current config → 409 STALE_AGENT_CONFIG with details.currentConfigId (412 when the base came in If-Match); ' +
        '(3) otherwise a new config becomes current atomically: of concurrent updates on one base exactly one wins. ' +
        'The base is `baseConfigId`, or the ETag in `If-Match: "cfg_…"` (both → they must agree, else 400; `*` is refused). ' +
        'To restore an earlier configuration, send its editable fields: the new config has the same contentDigest.',
      tag,
      params: AgentIdParams,
      body: UpdateAgentBody,
      requestHeaders: [IF_MATCH],
      example: { params: ex.agentParams, body: ex.updateAgentBody, response: ex.updatedAgent },
      responses: {
        200: { description: 'The Agent with its (new or unchanged) current config', schema: Agent, headers: ETAG_DOC },
        412: { description: 'STALE_AGENT_CONFIG: If-Match does not name the current config (details.currentConfigId)', schema: ErrorEnvelope },
      },
      errors: [...WITH_BODY, 'AGENT_NOT_FOUND', 'STALE_AGENT_CONFIG', 'PROJECT_NOT_FOUND', 'PROJECT_ARCHIVED', ...KNOWLEDGE, ...BASE],
      handler: async ({ params, body, call, req }, res) => {
        const ifMatch = parseIfMatch(req.get('if-match'));
        const { baseConfigId, changeNote, ...fields } = body;
        const request = { agentId: params.agentId, baseConfigId: baseOf(baseConfigId, ifMatch), fields: fieldsToProto(fields), changeNote };
        try {
          sendAgent(res, await agents.updateAgent(request, withKnowledgeDeadline(call, fields.knowledgeFiles)));
        } catch (err) {
          // A failed If-Match precondition is 412 (RFC 9110), with the body the 409 would have.
          if (ifMatch === undefined || !isAppError(err) || err.code !== 'STALE_AGENT_CONFIG') throw err;
          sendError(res, err, 412);
        }
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}',
      operationId: 'deleteAgent',
      summary: 'Delete an Agent, its configurations and chats',
      description: 'Schedules, triggers and knowledge copies are removed by their owners, driven by the agent.deleted event.',
      tag,
      params: AgentIdParams,
      example: { params: ex.agentParams },
      responses: { 204: { description: 'Deleted' } },
      errors: ['AGENT_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        await agents.deleteAgent({ agentId: params.agentId }, call);
        res.status(204).end();
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/versions',
      operationId: 'listAgentVersions',
      summary: 'The newest configurations (at most 100), newest first',
      description: 'Not a permanent audit record: configurations beyond CONFIG_RETENTION that no chat pins are deleted.',
      tag,
      params: AgentIdParams,
      example: { params: ex.agentParams, response: ex.versions },
      responses: { 200: { description: 'The versions', schema: AgentVersions } },
      errors: ['AGENT_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.listVersions({ agentId: params.agentId }, call);
        res.json({ versions: out.versions.map(configJson) });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/chats',
      operationId: 'createChat',
      summary: 'Start a chat pinned to the current configuration (or to the one `alias` names)',
      tag,
      idempotent: true,
      params: AgentIdParams,
      body: CreateChatBody,
      example: { params: ex.agentParams, body: { title: ex.chat.title }, response: ex.chat },
      responses: { 201: { description: 'Created', schema: Chat, headers: { Location: 'the new chat' } } },
      errors: [...WITH_BODY, 'AGENT_NOT_FOUND', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, body, call, idempotencyKey }, res) => {
        const chat = await agents.createChat({ agentId: params.agentId, title: body.title, idempotencyKey, alias: body.alias, routingKey: body.routingKey }, call);
        res.setHeader('Location', `/v1/agents/${chat.agentId}/chats/${chat.chatId}`);
        res.status(201).json(chatJson(chat));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/chats',
      operationId: 'listChats',
      summary: "The Agent's chats, newest first",
      tag,
      params: AgentIdParams,
      example: { params: ex.agentParams, response: { chats: [ex.chat] } },
      responses: { 200: { description: 'The chats', schema: ChatList } },
      errors: ['AGENT_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.listChats({ agentId: params.agentId }, call);
        res.json({ chats: out.chats.map(chatJson) });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/chats/{chatId}',
      operationId: 'getChat',
      summary: 'A chat with the configuration it is pinned to',
      tag,
      params: ChatIdParams,
      example: { params: ex.chatParams, response: ex.chatWithConfig },
      responses: { 200: { description: 'The chat', schema: ChatWithConfig } },
      errors: ['AGENT_NOT_FOUND', 'CHAT_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await agents.getChat({ agentId: params.agentId, chatId: params.chatId }, call);
        if (!out.chat || !out.config) throw errors.internal(new Error('chat response without chat or config'));
        res.json({ ...chatJson(out.chat), config: configJson(out.config) });
      },
    }),
  ];
}
