import type { WorkspaceEvent } from '@workspace/platform';
import { wants } from './event-types.js';
import type { Delivery, DeliveryQueue, WebhookRepo } from './ports.js';

/** The CloudEvent JSON (docs/events.md#envelope) as receivers get it (the internal trace context left out). */
export function eventBody(event: WorkspaceEvent): string {
  const { specversion, id, type, source, time, subject, data } = event;
  return JSON.stringify({ specversion, id, type, source, time, subject, data });
}

/**
 * Turns an event into one scheduled delivery per enabled webhook of its user that asks for its
 * type and existed when it happened. Idempotent: NATS may hand the same event over again, and
 * the queue schedules a delivery id (`<webhookId>:<eventId>`) once.
 */
export class Fanout {
  readonly #repo: WebhookRepo;
  readonly #queue: DeliveryQueue;
  readonly #scheduled: () => void;
  readonly #now: () => number;

  /** `scheduled`: told when something new is due (wakes this replica's dispatcher). */
  constructor(deps: { repo: WebhookRepo; queue: DeliveryQueue; scheduled?: () => void; now?: () => number }) {
    this.#repo = deps.repo;
    this.#queue = deps.queue;
    this.#scheduled = deps.scheduled ?? (() => undefined);
    this.#now = deps.now ?? Date.now;
  }

  /** Returns how many deliveries were scheduled. */
  async handle(event: WorkspaceEvent): Promise<number> {
    const webhooks = await this.#repo.list(event.data.userId);
    const happened = Date.parse(event.time);
    const targets = webhooks.filter((w) => w.enabled && wants(w.events, event.type) && Date.parse(w.createdAt) <= happened);
    if (targets.length === 0) return 0;
    const body = eventBody(event);
    const deliveries: Delivery[] = targets.map((w) => ({
      deliveryId: `${w.webhookId}:${event.id}`,
      userId: event.data.userId,
      webhookId: w.webhookId,
      eventId: event.id,
      type: event.type,
      body,
      attempt: 0,
      firstAttemptAt: null,
    }));
    const added = await this.#queue.enqueue(deliveries, this.#now());
    if (added > 0) this.#scheduled();
    return added;
  }
}
