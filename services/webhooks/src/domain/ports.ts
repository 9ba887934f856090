/** A webhook as the API shows it (docs/api/webhooks.md#routes). */
export interface WebhookRecord {
  webhookId: string;
  url: string;
  /** Event types (docs/events.md#types), or `*` for all. */
  events: string[];
  description: string;
  enabled: boolean;
  createdAt: string;
}

/** A webhook as stored: its signing secret sealed (AesGcmSecretBox), and when it began failing. */
export interface StoredWebhook extends WebhookRecord {
  sealedSecret: string;
  /** ms since the epoch of the first failed attempt since the last success; undefined when not failing. */
  failingSince?: number | undefined;
}

/** One attempt in a webhook's delivery log (newest first, at most 100). */
export interface AttemptEntry {
  eventId: string;
  type: string;
  attempt: number;
  status: number | null;
  error: string | null;
  at: string;
}

export type CreateOutcome = { status: 'created' } | { status: 'quota'; used: number };

/** The changes a PATCH may make; absent fields stay. `enabled: true` also restarts the failure clock. */
export interface WebhookChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
}

/** What an attempt did to its webhook: kept as it was, disabled now (failing for too long), or gone. */
export type AttemptVerdict = 'kept' | 'disabled' | 'gone';

/** One user's webhooks and their delivery logs. */
export interface WebhookRepo {
  /** Stores it unless the user already has `max`: checked in the same atomic step. */
  create(userId: string, webhook: StoredWebhook, max: number): Promise<CreateOutcome>;
  /** Newest first. */
  list(userId: string): Promise<StoredWebhook[]>;
  get(userId: string, webhookId: string): Promise<StoredWebhook | undefined>;
  /** Applies the changes to an existing webhook (atomically); undefined when there is none. */
  update(userId: string, webhookId: string, changes: WebhookChanges): Promise<StoredWebhook | undefined>;
  /** False when there was none. Its log goes with it. */
  delete(userId: string, webhookId: string): Promise<boolean>;
  /** The log, newest first. */
  attempts(userId: string, webhookId: string): Promise<AttemptEntry[]>;
  /**
   * Logs an attempt (the log keeps the newest `keep`) and moves the failure clock in one step: a
   * success stops it; a failure starts it, or disables the webhook once it has run `disableAfterMs`.
   */
  recordAttempt(options: { userId: string; webhookId: string; entry: AttemptEntry; ok: boolean; nowMs: number; disableAfterMs: number; keep: number }): Promise<AttemptVerdict>;
}

/** One event on its way to one webhook: scheduled in Redis until it succeeds or is given up. */
export interface Delivery {
  /** `<webhookId>:<eventId>`: an event redelivered by NATS schedules nothing twice. */
  deliveryId: string;
  userId: string;
  webhookId: string;
  eventId: string;
  type: string;
  /** The CloudEvent JSON, exactly as POSTed at every attempt. */
  body: string;
  /** Attempts made so far. */
  attempt: number;
  /** ms since the epoch of the first attempt; null before it. */
  firstAttemptAt: number | null;
}

/** A delivery this replica holds until its lease ends. */
export interface Claim {
  delivery: Delivery;
  token: string;
}

/** Deliveries by due time, shared by every replica; a claim is atomic and leased. */
export interface DeliveryQueue {
  /** Schedules the deliveries not already scheduled or recently finished; returns how many were new. */
  enqueue(deliveries: Delivery[], dueAt: number): Promise<number>;
  /** Takes up to `limit` due deliveries, each kept from other replicas for `leaseMs`. */
  claim(nowMs: number, leaseMs: number, limit: number): Promise<Claim[]>;
  /** Puts a claimed delivery back, as `next`, due at `dueAt` (nothing if the lease was lost). */
  reschedule(claim: Claim, next: Delivery, dueAt: number): Promise<void>;
  /** Removes a claimed delivery for good (delivered, given up, or its webhook gone). */
  complete(claim: Claim): Promise<void>;
  /** Deliveries scheduled, due or not. */
  depth(): Promise<number>;
}

/** What one POST to a receiver came to. `status` null: no answer (refused address, timeout, network). */
export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** POSTs a signed event to a receiver, with the SSRF guard, a timeout and no redirects followed. */
export interface Sender {
  send(options: { url: string; secret: string; messageId: string; body: string; signal: AbortSignal }): Promise<SendResult>;
}

/** Every address a host name resolves to (A and AAAA). */
export interface Resolver {
  resolve(host: string): Promise<string[]>;
}

/** Who a use case runs for. */
export interface Scope {
  userId: string;
  requestId?: string | undefined;
}
