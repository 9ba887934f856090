import { errors } from '@workspace/platform';
import type { Schedule as ScheduleProto, Trigger as TriggerProto } from '@workspace/proto/workspace/automations/v1/automations';
import { readRawBody } from '../../edge/raw-body.js';
import { AgentIdParams } from '../../api/schemas.js';
import {
  CreatedTrigger,
  CreateScheduleBody,
  CreateTriggerBody,
  HookAccepted,
  HookBody,
  HookParams,
  Schedule,
  ScheduleIdParams,
  ScheduleList,
  TriggerIdParams,
  TriggerList,
} from './automations.schemas.js';
import { defineRoute, type RouteDef } from '../../api/route.js';
import * as ex from './automations.examples.js';
import { X_SIGNATURE } from '../../api/request-headers.js';
import type { AutomationsClient } from '../../clients.js';


/** A webhook body is read whole before its signature is checked: 1 MiB, like JSON bodies. */
export const HOOK_BODY_LIMIT = 1024 * 1024;

const BASE = ['AGENT_NOT_FOUND', 'UNAUTHENTICATED', 'UNAVAILABLE'] as const;
const WITH_BODY = ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const;

function scheduleJson(s: ScheduleProto) {
  return { scheduleId: s.scheduleId, agentId: s.agentId, cron: s.cron, timezone: s.timezone, enabled: s.enabled, nextRunAt: s.nextRunAt ?? null, createdAt: s.createdAt, alias: s.alias ?? null };
}

function triggerJson(t: TriggerProto) {
  return { triggerId: t.triggerId, agentId: t.agentId, name: t.name, createdAt: t.createdAt, alias: t.alias ?? null };
}

/** Schedules and webhook triggers of an Agent (docs/api/automations.md), and the unauthenticated hook. */
export function automationsRoutes(automations: AutomationsClient): RouteDef[] {
  return [...scheduleRoutes(automations), ...triggerRoutes(automations), hookRoute(automations)];
}

function scheduleRoutes(automations: AutomationsClient): RouteDef[] {
  const tag = 'Schedules';
  return [
    defineRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/schedules',
      operationId: 'createSchedule',
      summary: 'Schedule chats of an Agent with a cron expression',
      description:
        'Each run starts one chat titled "Scheduled run", within seconds of its due time, however many replicas run. Runs missed while the service was down are not replayed one by one. ' +
        'An Agent has at most MAX_SCHEDULES_PER_AGENT schedules (default 50): one more → 403 QUOTA_EXCEEDED.',
      tag,
      idempotent: true,
      params: AgentIdParams,
      body: CreateScheduleBody,
      example: { params: { agentId: ex.schedule.agentId }, body: ex.createScheduleBody, response: ex.schedule },
      responses: { 201: { description: 'Created', schema: Schedule } },
      errors: [...WITH_BODY, 'QUOTA_EXCEEDED', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, body, call }, res) => {
        const schedule = await automations.createSchedule({ agentId: params.agentId, cron: body.cron, timezone: body.timezone, enabled: body.enabled, alias: body.alias }, call);
        res.status(201).json(scheduleJson(schedule));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/schedules',
      operationId: 'listSchedules',
      summary: "The Agent's schedules, newest first",
      tag,
      params: AgentIdParams,
      example: { params: { agentId: ex.schedule.agentId }, response: { schedules: [ex.schedule] } },
      responses: { 200: { description: 'The schedules', schema: ScheduleList } },
      errors: [...BASE],
      handler: async ({ params, call }, res) => {
        const out = await automations.listSchedules({ agentId: params.agentId }, call);
        res.json({ schedules: out.schedules.map(scheduleJson) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}/schedules/{scheduleId}',
      operationId: 'deleteSchedule',
      summary: 'Delete a schedule; it never runs again',
      tag,
      params: ScheduleIdParams,
      example: { params: ex.scheduleParams },
      responses: { 204: { description: 'Deleted' } },
      errors: ['SCHEDULE_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        await automations.deleteSchedule({ agentId: params.agentId, scheduleId: params.scheduleId }, call);
        res.status(204).end();
      },
    }),
  ];
}

function triggerRoutes(automations: AutomationsClient): RouteDef[] {
  const tag = 'Webhook triggers';
  return [
    defineRoute({
      method: 'post',
      path: '/v1/agents/{agentId}/triggers',
      operationId: 'createTrigger',
      summary: 'Create a webhook trigger; its secret is shown only in this response',
      description:
        'An Agent has at most MAX_TRIGGERS_PER_AGENT triggers (default 50): one more → 403 QUOTA_EXCEEDED. ' +
        'With an Idempotency-Key, a repeat within 24 h replays this response, secret included.',
      tag,
      idempotent: true,
      params: AgentIdParams,
      body: CreateTriggerBody,
      example: { params: { agentId: ex.schedule.agentId }, body: ex.createTriggerBody, response: ex.createdTrigger },
      responses: { 201: { description: 'Created, with the secret', schema: CreatedTrigger } },
      errors: [...WITH_BODY, 'QUOTA_EXCEEDED', 'ALIAS_NOT_FOUND', ...BASE],
      handler: async ({ params, body, call }, res) => {
        const out = await automations.createTrigger({ agentId: params.agentId, name: body.name, alias: body.alias }, call);
        if (!out.trigger) throw errors.internal(new Error('createTrigger response without trigger'));
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json({ ...triggerJson(out.trigger), secret: out.secret });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/{agentId}/triggers',
      operationId: 'listTriggers',
      summary: "The Agent's webhook triggers, newest first (no secrets)",
      tag,
      params: AgentIdParams,
      example: { params: { agentId: ex.schedule.agentId }, response: ex.triggerList },
      responses: { 200: { description: 'The triggers', schema: TriggerList } },
      errors: [...BASE],
      handler: async ({ params, call }, res) => {
        const out = await automations.listTriggers({ agentId: params.agentId }, call);
        res.json({ triggers: out.triggers.map(triggerJson) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agents/{agentId}/triggers/{triggerId}',
      operationId: 'deleteTrigger',
      summary: 'Delete a webhook trigger; its hook answers 404 from then on',
      tag,
      params: TriggerIdParams,
      example: { params: ex.triggerParams },
      responses: { 204: { description: 'Deleted' } },
      errors: ['TRIGGER_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        await automations.deleteTrigger({ agentId: params.agentId, triggerId: params.triggerId }, call);
        res.status(204).end();
      },
    }),
  ];
}

function hookRoute(automations: AutomationsClient): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/v1/hooks/{triggerId}',
    operationId: 'fireTrigger',
    summary: 'Start a chat from outside: a webhook signed with the trigger secret (no bearer token)',
    description:
      'Send `X-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the UTF-8 bytes of the secret, over the body exactly as sent ' +
      '(any content type, at most 1 MiB). An unknown trigger answers 404 TRIGGER_NOT_FOUND; a missing or wrong signature 401 UNAUTHENTICATED. ' +
      'A valid call starts one chat titled "Webhook: <trigger name>" and answers 202; a trigger made with an alias starts it on the config the alias names now, ' +
      'and answers 404 ALIAS_NOT_FOUND (starting nothing) once that alias is deleted. Each trigger has its own rate limit (RATE_LIMIT_PER_SECOND, ' +
      'bursts of RATE_LIMIT_BURST), signed or not: beyond it → 429 RATE_LIMITED with Retry-After.',
    tag: 'Webhook triggers',
    auth: false,
    rateLimitKey: (req) => `hook:${String(req.params.triggerId)}`,
    params: HookParams,
    rawBody: { contentType: '*/*', schema: HookBody, description: 'the payload, signed as sent; at most 1 MiB (more → 413)' },
    requestHeaders: [X_SIGNATURE],
    example: { params: ex.hookParams, body: ex.hookBody, response: ex.hookAccepted },
    responses: { 202: { description: 'Accepted: a chat started', schema: HookAccepted } },
    errors: ['TRIGGER_NOT_FOUND', 'ALIAS_NOT_FOUND', 'UNAUTHENTICATED', 'PAYLOAD_TOO_LARGE', 'UNAVAILABLE'],
    handler: async ({ params, call, req }, res) => {
      const body = await readRawBody(req, res, HOOK_BODY_LIMIT);
      // No user on this call: the automations service finds the owner from the trigger.
      const out = await automations.fireTrigger({ triggerId: params.triggerId, body, signature: req.get('x-signature') ?? '' }, { requestId: call.requestId, signal: call.signal });
      res.status(202).json({ triggerId: out.triggerId, chatId: out.chatId });
    },
  });
}
