import type { Logger, SecretBox } from '@workspace/platform';
import { nextAttemptAt, type RetryPolicy } from './backoff.js';
import type { Claim, DeliveryQueue, Sender, SendResult, StoredWebhook, WebhookRepo } from './ports.js';
import { ReceiverSlots } from './receiver-slots.js';

/** How an attempt ended, for metrics. */
export type DeliveryOutcome = 'delivered' | 'failed' | 'gave_up' | 'dropped';

export interface DispatcherOptions {
  queue: DeliveryQueue;
  repo: WebhookRepo;
  sender: Sender;
  box: SecretBox;
  logger: Logger;
  retry: RetryPolicy;
  /** A webhook whose attempts have all failed for this long is disabled (docs/api/webhooks.md#disabling: 5 days). */
  disableAfterMs: number;
  /** In-flight attempts per receiver and in all, on this replica. */
  perReceiver: number;
  maxInFlight: number;
  /** Pause between passes over the queue when nothing wakes the dispatcher earlier. */
  tickMs: number;
  /** How long a claimed delivery is kept from other replicas: above the attempt's timeout. */
  leaseMs: number;
  /** The longest an attempt takes (the sender's timeout): a waiting delivery starts only while its lease outlasts one. */
  attemptMs: number;
  /** Attempts kept in each webhook's log. */
  logSize?: number;
  observe?: (outcome: DeliveryOutcome, seconds: number) => void;
  now?: () => number;
}

/** Claims per round trip to the queue. */
const BATCH = 64;
/** An attempt that could not be signed: logged and retried like any failure, never sent unsigned. */
const UNSIGNABLE: SendResult = { ok: false, status: null, error: 'signing secret unavailable' };
/** A delivery whose receiver has no free slot and a full line here goes back to the queue for this long. */
const BUSY_DELAY_MS = 500;
/** Claimed deliveries that may wait per receiver, in slots' worth. */
const LINE_SLOTS = 8;
/** Time kept in hand, after an attempt, to record it before the lease ends. */
const RECORD_MARGIN_MS = 5_000;

/** A claimed delivery waiting for its receiver's slot, and when it was claimed. */
interface Waiting {
  claim: Claim;
  claimedAt: number;
}

/**
 * Delivers due deliveries: every replica runs one, claiming from the shared queue (a claim is a
 * lease, so a replica that dies mid-attempt leaves the delivery to another once it ends). Each
 * attempt runs on its own (never awaited by the loop), within its receiver's slots; a receiver
 * without a free slot has its delivery put back for a second, so one that hangs or answers
 * slowly never holds up another's. A 2xx completes the delivery; anything else is retried with
 * backoff until the retry window has passed, logging every attempt and disabling the webhook
 * once it has failed for `disableAfterMs`.
 */
export class Dispatcher {
  readonly #o: Required<Omit<DispatcherOptions, 'observe'>> & Pick<DispatcherOptions, 'observe'>;
  readonly #slots: ReceiverSlots<Waiting>;
  readonly #attempts = new Set<Promise<void>>();
  readonly #stop = new AbortController();
  #wake: (() => void) | undefined;
  #kicked = false;
  #loop: Promise<void> | undefined;

  constructor(options: DispatcherOptions) {
    this.#o = { logSize: 100, now: Date.now, ...options };
    this.#slots = new ReceiverSlots({ perReceiver: options.perReceiver, total: options.maxInFlight, maxWaiting: options.perReceiver * LINE_SLOTS });
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Something became due: pass over the queue now rather than at the next tick. */
  kick(): void {
    this.#kicked = true;
    this.#wake?.();
  }

  /** Stops claiming; waiting deliveries go back to the queue, attempts in flight are cut off (their leases bring them back). */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await this.#loop;
    await Promise.allSettled(this.#slots.drain().map((w) => this.#o.queue.reschedule(w.claim, w.claim.delivery, this.#o.now())));
    await Promise.allSettled([...this.#attempts]);
  }

  async #run(): Promise<void> {
    let failing = false;
    while (!this.#stop.signal.aborted) {
      this.#kicked = false;
      try {
        await this.#pass();
        if (failing) this.#o.logger.info('webhook queue reachable again');
        failing = false;
      } catch (err) {
        // Once per outage (Redis down, say), not once per tick.
        if (!failing) this.#o.logger.warn({ err }, 'webhook queue pass failed; retrying every tick until it works');
        failing = true;
      }
      if (!this.#kicked) await this.#pause();
    }
  }

  #pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.#o.tickMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  /** Claims until nothing more is due or this replica is full. */
  async #pass(): Promise<void> {
    while (!this.#stop.signal.aborted && this.#slots.room > 0) {
      const limit = Math.min(BATCH, this.#slots.room);
      const now = this.#o.now();
      const claims = await this.#o.queue.claim(now, this.#o.leaseMs, limit);
      for (const claim of claims) {
        const receiver = claim.delivery.webhookId;
        if (this.#slots.take(receiver)) this.#launch(claim);
        else if (!this.#slots.wait(receiver, { claim, claimedAt: now })) await this.#o.queue.reschedule(claim, claim.delivery, now + BUSY_DELAY_MS);
      }
      if (claims.length < limit) return;
    }
  }

  /** Runs an attempt in a slot already taken; its slot then goes to the receiver's next waiting delivery. */
  #launch(claim: Claim): void {
    const attempt = this.#attempt(claim).finally(() => {
      this.#attempts.delete(attempt);
      this.#handOver(claim.delivery.webhookId);
      this.kick();
    });
    this.#attempts.add(attempt);
  }

  /** Starts the next waiting delivery whose lease still outlasts an attempt; stale ones go back to the queue. */
  #handOver(receiver: string): void {
    for (let next = this.#slots.release(receiver); next !== undefined; next = this.#slots.release(receiver)) {
      const now = this.#o.now();
      if (!this.#stop.signal.aborted && now - next.claimedAt + this.#o.attemptMs + RECORD_MARGIN_MS <= this.#o.leaseMs) return this.#launch(next.claim);
      void this.#o.queue.reschedule(next.claim, next.claim.delivery, now).catch(() => undefined); // else its lease brings it back
    }
  }

  async #attempt(claim: Claim): Promise<void> {
    const { delivery } = claim;
    const started = this.#o.now();
    try {
      const webhook = await this.#o.repo.get(delivery.userId, delivery.webhookId);
      if (!webhook || !webhook.enabled) {
        await this.#o.queue.complete(claim);
        this.#o.observe?.('dropped', 0);
        return;
      }
      const secret = this.#secretOf(webhook);
      const result = secret === undefined ? UNSIGNABLE : await this.#send(webhook.url, secret, claim);
      if (this.#stop.signal.aborted && !result.ok) return; // cut off by shutdown: the lease brings it back
      await this.#settle(claim, result, started);
    } catch (err) {
      this.#o.logger.warn({ err, webhookId: delivery.webhookId, eventId: delivery.eventId }, 'webhook attempt could not be recorded; it runs again when its lease ends');
    }
  }

  /** The signing secret, or undefined when it cannot be opened (WEBHOOK_SECRET_KEY changed or unset). */
  #secretOf(webhook: StoredWebhook): string | undefined {
    try {
      return this.#o.box.open(webhook.sealedSecret, webhook.webhookId);
    } catch (err) {
      this.#o.logger.error({ err, webhookId: webhook.webhookId }, 'webhook secret cannot be opened; attempts fail until WEBHOOK_SECRET_KEY is the key it was sealed with');
      return undefined;
    }
  }

  async #send(url: string, secret: string, claim: Claim): Promise<SendResult> {
    const { delivery } = claim;
    return this.#o.sender.send({ url, secret, messageId: delivery.eventId, body: delivery.body, signal: this.#stop.signal });
  }

  async #settle(claim: Claim, result: SendResult, started: number): Promise<void> {
    const { delivery } = claim;
    const now = this.#o.now();
    const attempt = delivery.attempt + 1;
    const firstAttemptAt = delivery.firstAttemptAt ?? started;
    const entry = { eventId: delivery.eventId, type: delivery.type, attempt, status: result.status, error: result.error, at: new Date(now).toISOString() };
    const verdict = await this.#o.repo.recordAttempt({ userId: delivery.userId, webhookId: delivery.webhookId, entry, ok: result.ok, nowMs: now, disableAfterMs: this.#o.disableAfterMs, keep: this.#o.logSize });
    const seconds = (now - started) / 1000;
    if (result.ok || verdict !== 'kept') {
      await this.#o.queue.complete(claim);
      this.#o.observe?.(result.ok ? 'delivered' : 'dropped', seconds);
      if (verdict === 'disabled') this.#o.logger.warn({ webhookId: delivery.webhookId }, 'webhook disabled: its deliveries have all failed for too long');
      return;
    }
    const dueAt = nextAttemptAt({ attempt, firstAttemptAt, nowMs: now, policy: this.#o.retry });
    if (dueAt === undefined) {
      await this.#o.queue.complete(claim);
      this.#o.observe?.('gave_up', seconds);
      this.#o.logger.warn({ webhookId: delivery.webhookId, eventId: delivery.eventId, attempt }, 'webhook delivery given up after the retry window');
      return;
    }
    await this.#o.queue.reschedule(claim, { ...delivery, attempt, firstAttemptAt }, dueAt);
    this.#o.observe?.('failed', seconds);
  }
}
