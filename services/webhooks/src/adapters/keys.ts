import { userTag } from '@workspace/platform';

/**
 * Redis keys of one user's webhooks; all share the user's hash tag (one Redis Cluster slot).
 * `namespace` (WEBHOOK_NAMESPACE, `webhooks` by default) keeps a deployment's webhooks apart
 * from another's on the same Redis: a deployment delivers only the webhooks it holds.
 */
export function userKeys(namespace: string, userId: string) {
  const base = `${namespace}:${userTag(userId)}`;
  return {
    /** Hash: one webhook (url, events JSON, description, enabled, createdAt, sealedSecret, failingSince). */
    webhook: (webhookId: string) => `${base}:webhook:${webhookId}`,
    /** Sorted set of the user's webhook ids, scored by creation time (ms). */
    webhooks: `${base}:webhooks`,
    /** Sorted set: the webhook's attempts (JSON each) by when they ended (ms). */
    log: (webhookId: string) => `${base}:log:${webhookId}`,
  };
}

/**
 * The delivery queue, shared by every replica: one hash tag, so a claim is one atomic script.
 * On Redis Cluster the queue lives on one node (about the size of the pending events' JSON);
 * past what one node takes, split it into tagged shards visited in turn. `namespace` keeps a
 * deployment's (or a test stack's) queue apart from others on the same Redis.
 */
export function queueKeys(namespace: string) {
  const base = `${namespace}:{deliveries}`;
  return {
    /** Sorted set: delivery id → when it is due (ms), or when its claim's lease ends. */
    due: `${base}:due`,
    /** Hash: delivery id → the delivery's JSON. */
    jobs: `${base}:jobs`,
    /** Hash: delivery id → the token of the claim that holds it. */
    claims: `${base}:claims`,
    /** String with a TTL: a delivery finished lately, so a redelivered event schedules it no more. */
    done: (deliveryId: string) => `${base}:done:${deliveryId}`,
  };
}
