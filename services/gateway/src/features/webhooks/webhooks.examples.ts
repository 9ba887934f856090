/** Examples of the outbound webhook routes (docs/api/webhooks.md). */

export const WEBHOOK_ID = 'whk_0123456789abcdef0123456789abcdef';

export const webhook = {
  webhookId: WEBHOOK_ID,
  url: 'https://example.com/hooks/workspace',
  events: ['agent.updated', 'chat.created'],
  description: 'CI notifications',
  enabled: true,
  createdAt: '2026-11-25T10:00:00.000Z',
};

export const createBody = { url: 'https://example.com/hooks/workspace', events: ['agent.updated', 'chat.created'], description: 'CI notifications' };

export const created = { ...webhook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0cF0Zf5Hn2g=' };

export const deliveries = {
  deliveries: [{ eventId: '5d7c1c2e-8d7e-4c55-9a8e-3f1b2a0c9d11', type: 'agent.updated', attempt: 2, status: 200, error: null, at: '2026-11-25T10:00:06.120Z' }],
};
