import { EVENT_DATA } from '@workspace/platform';
import { z } from 'zod';
import { timestamp, wellFormed } from '../../api/schemas.js';

const EVENT_LIST = `${Object.keys(EVENT_DATA).sort().join(', ')}, or "*" for all`;

export const WebhookIdParams = z.object({ webhookId: z.string().describe('`whk_` + 32 lowercase hex') }).strict();

const url = wellFormed(z.string())
  .max(2048)
  .describe(
    'absolute https URL (plain http only to a host in WEBHOOK_ALLOWED_HOSTS); a host resolving to a private, loopback, link-local or other non-public address is refused (400, details.field "url") unless listed there',
  );
const events = z.array(wellFormed(z.string()).max(64)).describe(`at least one event type: ${EVENT_LIST}; an unknown one is 400 with details.field "events"`);
const description = wellFormed(z.string()).describe('at most 1,000 characters');

export const CreateWebhookBody = z
  .object({ url, events, description: description.optional().describe('default ""; at most 1,000 characters') })
  .strict()
  .meta({ id: 'CreateWebhookRequest', examples: [{ url: 'https://example.com/hooks/workspace', events: ['agent.updated', 'chat.created', 'file.created'], description: 'CI notifications' }] });

export const UpdateWebhookBody = z
  .object({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: z.boolean().optional().describe('true re-enables a webhook disabled after failing; its failure clock starts again'),
  })
  .strict()
  .meta({ id: 'UpdateWebhookRequest', examples: [{ enabled: true }] });

const WEBHOOK_EXAMPLE = {
  webhookId: 'whk_0123456789abcdef0123456789abcdef',
  url: 'https://example.com/hooks/workspace',
  events: ['agent.updated', 'chat.created'],
  description: 'CI notifications',
  enabled: true,
  createdAt: '2026-11-25T10:00:00.000Z',
};

export const Webhook = z
  .object({
    webhookId: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string(),
    enabled: z.boolean().describe('false once every delivery has failed for 5 days (or after PATCH enabled:false); nothing is delivered then'),
    createdAt: timestamp,
  })
  .meta({ id: 'Webhook', examples: [WEBHOOK_EXAMPLE] });

export const CreatedWebhook = Webhook.extend({
  secret: z.string().describe('shown only in this response: `whsec_` + base64 of 32 random bytes, the Standard Webhooks signing secret'),
}).meta({ id: 'CreatedWebhook', examples: [{ ...WEBHOOK_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0cF0Zf5Hn2g=' }] });

export const WebhookList = z.object({ webhooks: z.array(Webhook).describe('newest first; secrets are never listed') }).meta({ id: 'WebhookList' });

export const DeliveryAttempt = z
  .object({
    eventId: z.string().describe('the event id, also the webhook-id header'),
    type: z.string(),
    attempt: z.number().int().describe('1 for the first attempt at this event'),
    status: z.number().int().nullable().describe("the receiver's HTTP status; null when no answer came"),
    error: z.string().nullable().describe('short reason of a failure; null on a 2xx'),
    at: timestamp,
  })
  .meta({ id: 'DeliveryAttempt' });

export const DeliveryList = z
  .object({ deliveries: z.array(DeliveryAttempt).describe('the last 100 attempts, newest first') })
  .meta({ id: 'DeliveryList', examples: [{ deliveries: [{ eventId: '5d7c1c2e-8d7e-4c55-9a8e-3f1b2a0c9d11', type: 'agent.updated', attempt: 2, status: 200, error: null, at: '2026-11-25T10:00:06.120Z' }] }] });
