import { AesGcmSecretBox, defineService, EVENT_DATA, type EventHandlers, type Metrics } from '@workspace/platform';
import { WebhooksServiceService } from '@workspace/proto/workspace/webhooks/v1/webhooks';
import { RedisDeliveryQueue } from './adapters/delivery-queue.redis.js';
import { DnsResolver } from './adapters/dns-resolver.js';
import { HttpSender } from './adapters/http-sender.js';
import { RedisWebhookRepo } from './adapters/webhook-repo.redis.js';
import { AddressPolicy } from './domain/address-policy.js';
import { Dispatcher, type DeliveryOutcome } from './domain/dispatcher.js';
import { Fanout } from './domain/fanout.js';
import type { Resolver } from './domain/ports.js';
import { UrlGuard } from './domain/url-guard.js';
import { Webhooks } from './domain/webhooks.js';
import { configSchema } from './config.js';
import { webhooksHandlers } from './grpc/webhooks.handlers.js';

function deliveryObserver(metrics: Metrics) {
  const attempts = metrics.counter('webhooks_deliveries_total', 'Webhook delivery attempts, by outcome (delivered, failed and to be retried, gave_up after the retry window, dropped: webhook deleted or disabled)', ['outcome']);
  const latency = metrics.histogram('webhooks_delivery_duration_seconds', 'How long one attempt took, to the end of the answer or the timeout', ['outcome']);
  return (outcome: DeliveryOutcome, seconds: number) => {
    attempts.inc({ outcome });
    if (outcome !== 'dropped') latency.observe({ outcome }, seconds);
  };
}

/**
 * The webhooks service (docs/api/webhooks.md): users' outbound webhooks in Redis, and delivery of
 * their events. A durable consumer per event subject, shared by the replicas, turns each event into
 * deliveries in the Redis queue; every replica's dispatcher claims due ones and POSTs them.
 * Readiness follows Redis only: with NATS down the API works and deliveries catch up later.
 */
export const webhooksService = defineService({
  name: 'webhooks',
  config: configSchema,
  deps: {
    /** Host name → addresses, at create/PATCH and at every connect. */
    resolver: (): Resolver => new DnsResolver(),
  },
  build(ctx, { resolver }) {
    const { redis, logger, metrics, config } = ctx;
    const policy = new AddressPolicy(config.WEBHOOK_ALLOWED_HOSTS);
    const box = new AesGcmSecretBox(config.WEBHOOK_SECRET_KEY, 'WEBHOOK_SECRET_KEY');
    if (!box.sealing) logger.warn('WEBHOOK_SECRET_KEY is not set: webhook signing secrets are stored unencrypted in Redis');
    const repo = new RedisWebhookRepo(redis, config.WEBHOOK_NAMESPACE);
    const queue = new RedisDeliveryQueue(redis, config.WEBHOOK_NAMESPACE);
    const sender = new HttpSender({ policy, resolver, timeoutMs: config.WEBHOOK_TIMEOUT_MS });
    const dispatcher = new Dispatcher({
      queue,
      repo,
      sender,
      box,
      logger,
      retry: { baseMs: config.WEBHOOK_RETRY_BASE_MS, maxMs: config.WEBHOOK_RETRY_MAX_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
      perReceiver: config.WEBHOOK_CONCURRENCY_PER_RECEIVER,
      maxInFlight: config.WEBHOOK_CONCURRENCY,
      tickMs: config.WEBHOOK_TICK_MS,
      // An attempt ends by its timeout; the margin covers recording it.
      leaseMs: config.WEBHOOK_TIMEOUT_MS + 20_000,
      attemptMs: config.WEBHOOK_TIMEOUT_MS,
      observe: deliveryObserver(metrics),
    });
    const fanout = new Fanout({ repo, queue, scheduled: () => dispatcher.kick() });
    const handle = (event: Parameters<Fanout['handle']>[0]) => fanout.handle(event).then(() => undefined);
    const handlers = Object.fromEntries(Object.keys(EVENT_DATA).map((type) => [type, handle])) as EventHandlers;
    // Starts at the next event when the durables are new: a webhook only hears of what happens after it exists.
    ctx.consume(handlers, config.WEBHOOK_NAMESPACE, { startAt: 'new', inactiveThresholdMs: config.WEBHOOK_CONSUMER_INACTIVE_MS });
    ctx.background('dispatcher', dispatcher);
    ctx.onStop('sender', () => sender.close());
    ctx.serve(WebhooksServiceService, webhooksHandlers(new Webhooks({ repo, guard: new UrlGuard({ policy, resolver }), box, max: config.MAX_WEBHOOKS })));
    metrics.sampled('webhooks_scheduled_deliveries', 'Deliveries in the queue (due, in flight or waiting for a retry)', 'service', async () => ({ webhooks: await queue.depth() }));
  },
});
