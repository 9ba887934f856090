import { errors } from '@workspace/platform';
import type { Webhook as WebhookProto } from '@workspace/proto/workspace/webhooks/v1/webhooks';
import { CreatedWebhook, CreateWebhookBody, DeliveryList, UpdateWebhookBody, Webhook, WebhookIdParams, WebhookList } from './webhooks.schemas.js';
import * as ex from './webhooks.examples.js';
import { defineRoute, type RouteDef } from '../../api/route.js';
import type { WebhooksClient } from '../../clients.js';


const BASE = ['UNAUTHENTICATED', 'UNAVAILABLE'] as const;
const WITH_BODY = ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const;
const tag = 'Webhooks';

function webhookJson(w: WebhookProto) {
  return { webhookId: w.webhookId, url: w.url, events: w.events, description: w.description, enabled: w.enabled, createdAt: w.createdAt };
}

/** Outbound webhooks (docs/api/webhooks.md): subscriptions and their delivery log. */
export function webhooksRoutes(webhooks: WebhooksClient): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary: 'Subscribe an endpoint to your events; the signing secret is shown only in this response',
      description:
        'Every event of yours whose type is listed is POSTed to the URL as CloudEvents JSON, signed per Standard Webhooks (webhook-id = the event id, webhook-timestamp, webhook-signature), ' +
        'retried with exponential backoff for at least 24 h on anything but a 2xx. At most MAX_WEBHOOKS per user (default 20): one more → 403 QUOTA_EXCEEDED. ' +
        'With an Idempotency-Key, a repeat within 24 h replays this response, secret included.',
      tag,
      idempotent: true,
      body: CreateWebhookBody,
      responses: { 201: { description: 'Created, with the secret', schema: CreatedWebhook } },
      example: { body: ex.createBody, response: ex.created },
      errors: [...WITH_BODY, 'QUOTA_EXCEEDED', ...BASE],
      handler: async ({ body, call }, res) => {
        const out = await webhooks.createWebhook({ url: body.url, events: body.events, description: body.description }, call);
        if (!out.webhook) throw errors.internal(new Error('createWebhook response without webhook'));
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json({ ...webhookJson(out.webhook), secret: out.secret });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary: 'Your webhooks, newest first (no secrets)',
      tag,
      responses: { 200: { description: 'The webhooks', schema: WebhookList } },
      example: { response: { webhooks: [ex.webhook] } },
      errors: [...BASE],
      handler: async ({ call }, res) => {
        const out = await webhooks.listWebhooks({}, call);
        res.json({ webhooks: out.webhooks.map(webhookJson) });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks/{webhookId}',
      operationId: 'getWebhook',
      summary: 'One webhook (no secret)',
      tag,
      params: WebhookIdParams,
      responses: { 200: { description: 'The webhook', schema: Webhook } },
      example: { params: { webhookId: ex.WEBHOOK_ID }, response: ex.webhook },
      errors: ['WEBHOOK_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        res.json(webhookJson(await webhooks.getWebhook({ webhookId: params.webhookId }, call)));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/webhooks/{webhookId}',
      operationId: 'updateWebhook',
      summary: 'Change url, events, description or enabled; absent fields stay',
      tag,
      params: WebhookIdParams,
      body: UpdateWebhookBody,
      responses: { 200: { description: 'The webhook as it is now', schema: Webhook } },
      example: { params: { webhookId: ex.WEBHOOK_ID }, body: { enabled: false }, response: { ...ex.webhook, enabled: false } },
      errors: [...WITH_BODY, 'WEBHOOK_NOT_FOUND', ...BASE],
      handler: async ({ params, body, call }, res) => {
        const request = { webhookId: params.webhookId, url: body.url, events: body.events && { types: body.events }, description: body.description, enabled: body.enabled };
        res.json(webhookJson(await webhooks.updateWebhook(request, call)));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhooks/{webhookId}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook; nothing more is delivered to it',
      tag,
      params: WebhookIdParams,
      responses: { 204: { description: 'Deleted' } },
      example: { params: { webhookId: ex.WEBHOOK_ID } },
      errors: ['WEBHOOK_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        await webhooks.deleteWebhook({ webhookId: params.webhookId }, call);
        res.status(204).end();
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks/{webhookId}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The last 100 delivery attempts, newest first',
      tag,
      params: WebhookIdParams,
      responses: { 200: { description: 'The attempts', schema: DeliveryList } },
      example: { params: { webhookId: ex.WEBHOOK_ID }, response: ex.deliveries },
      errors: ['WEBHOOK_NOT_FOUND', ...BASE],
      handler: async ({ params, call }, res) => {
        const out = await webhooks.listDeliveries({ webhookId: params.webhookId }, call);
        res.json({ deliveries: out.deliveries.map((d) => ({ eventId: d.eventId, type: d.type, attempt: d.attempt, status: d.status ?? null, error: d.error ?? null, at: d.at })) });
      },
    }),
  ];
}
