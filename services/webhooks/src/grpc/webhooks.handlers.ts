import { requireUser, type AsyncService, type CallContext } from '@workspace/platform';
import type { Webhook as WebhookProto, WebhooksServiceService } from '@workspace/proto/workspace/webhooks/v1/webhooks';
import type { Scope, WebhookRecord } from '../domain/ports.js';
import type { Webhooks } from '../domain/webhooks.js';

function scopeOf(ctx: CallContext): Scope {
  return { userId: requireUser(ctx), requestId: ctx.requestId };
}

function toProto(w: WebhookRecord): WebhookProto {
  return { webhookId: w.webhookId, url: w.url, events: w.events, description: w.description, enabled: w.enabled, createdAt: w.createdAt };
}

/** Decode → domain → encode; every rule lives in the domain. */
export function webhooksHandlers(webhooks: Webhooks): AsyncService<typeof WebhooksServiceService> {
  return {
    createWebhook: async (req, ctx) => {
      const { webhook, secret } = await webhooks.create(scopeOf(ctx), { url: req.url, events: req.events, description: req.description });
      return { webhook: toProto(webhook), secret };
    },
    listWebhooks: async (_req, ctx) => ({ webhooks: (await webhooks.list(scopeOf(ctx))).map(toProto) }),
    getWebhook: async (req, ctx) => toProto(await webhooks.get(scopeOf(ctx), req.webhookId)),
    updateWebhook: async (req, ctx) =>
      toProto(await webhooks.update(scopeOf(ctx), req.webhookId, { url: req.url, events: req.events?.types, description: req.description, enabled: req.enabled })),
    deleteWebhook: async (req, ctx) => {
      await webhooks.delete(scopeOf(ctx), req.webhookId);
      return {};
    },
    listDeliveries: async (req, ctx) => ({
      deliveries: (await webhooks.deliveries(scopeOf(ctx), req.webhookId)).map((d) => ({
        eventId: d.eventId,
        type: d.type,
        attempt: d.attempt,
        status: d.status ?? undefined,
        error: d.error ?? undefined,
        at: d.at,
      })),
    }),
  };
}
