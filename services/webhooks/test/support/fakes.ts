import type { AttemptEntry, AttemptVerdict, Claim, CreateOutcome, Delivery, DeliveryQueue, Sender, SendResult, StoredWebhook, WebhookChanges, WebhookRepo } from '../../src/domain/ports.js';

/** The webhook repository in memory, with the Redis scripts' rules (tested against Redis in redis.int.test.ts). */
export class MemoryWebhookRepo implements WebhookRepo {
  readonly byUser = new Map<string, Map<string, StoredWebhook>>();
  readonly logs = new Map<string, AttemptEntry[]>();

  #of(userId: string): Map<string, StoredWebhook> {
    let m = this.byUser.get(userId);
    if (!m) this.byUser.set(userId, (m = new Map()));
    return m;
  }

  async create(userId: string, webhook: StoredWebhook, max: number): Promise<CreateOutcome> {
    const m = this.#of(userId);
    if (m.size >= max) return { status: 'quota', used: m.size };
    m.set(webhook.webhookId, { ...webhook });
    return { status: 'created' };
  }

  async list(userId: string): Promise<StoredWebhook[]> {
    return [...this.#of(userId).values()].reverse();
  }

  async get(userId: string, webhookId: string): Promise<StoredWebhook | undefined> {
    const w = this.#of(userId).get(webhookId);
    return w && { ...w };
  }

  async update(userId: string, webhookId: string, changes: WebhookChanges): Promise<StoredWebhook | undefined> {
    const w = this.#of(userId).get(webhookId);
    if (!w) return undefined;
    for (const [k, v] of Object.entries(changes)) if (v !== undefined) Object.assign(w, { [k]: v });
    if (changes.enabled === true) w.failingSince = undefined;
    return { ...w };
  }

  async delete(userId: string, webhookId: string): Promise<boolean> {
    this.logs.delete(webhookId);
    return this.#of(userId).delete(webhookId);
  }

  async attempts(_userId: string, webhookId: string): Promise<AttemptEntry[]> {
    return this.logs.get(webhookId) ?? [];
  }

  async recordAttempt(o: { userId: string; webhookId: string; entry: AttemptEntry; ok: boolean; nowMs: number; disableAfterMs: number; keep: number }): Promise<AttemptVerdict> {
    const w = this.#of(o.userId).get(o.webhookId);
    if (!w) return 'gone';
    this.logs.set(o.webhookId, [o.entry, ...(this.logs.get(o.webhookId) ?? [])].slice(0, o.keep));
    if (o.ok) {
      w.failingSince = undefined;
      return 'kept';
    }
    if (w.failingSince === undefined) {
      w.failingSince = o.nowMs;
      return 'kept';
    }
    if (o.nowMs - w.failingSince >= o.disableAfterMs && w.enabled) {
      w.enabled = false;
      return 'disabled';
    }
    return 'kept';
  }
}

/** The delivery queue in memory: due times, leases and tokens as the Redis scripts keep them. */
export class MemoryQueue implements DeliveryQueue {
  readonly due = new Map<string, number>();
  readonly jobs = new Map<string, Delivery>();
  readonly claims = new Map<string, string>();
  readonly done = new Set<string>();
  /** Ids put back by `reschedule`, in order. */
  readonly rescheduled: string[] = [];
  #serial = 0;

  async enqueue(deliveries: Delivery[], dueAt: number): Promise<number> {
    let added = 0;
    for (const d of deliveries) {
      if (this.done.has(d.deliveryId) || this.jobs.has(d.deliveryId)) continue;
      this.jobs.set(d.deliveryId, d);
      this.due.set(d.deliveryId, dueAt);
      added++;
    }
    return added;
  }

  async claim(nowMs: number, leaseMs: number, limit: number): Promise<Claim[]> {
    const ids = [...this.due].filter(([, at]) => at <= nowMs).sort((a, b) => a[1] - b[1]).slice(0, limit).map(([id]) => id);
    return ids.map((id) => {
      const token = `t${this.#serial++}`;
      this.due.set(id, nowMs + leaseMs);
      this.claims.set(id, token);
      return { token, delivery: this.jobs.get(id)! };
    });
  }

  async reschedule(claim: Claim, next: Delivery, dueAt: number): Promise<void> {
    const id = claim.delivery.deliveryId;
    if (this.claims.get(id) !== claim.token) return;
    this.rescheduled.push(id);
    this.jobs.set(id, next);
    this.due.set(id, dueAt);
    this.claims.delete(id);
  }

  async complete(claim: Claim): Promise<void> {
    const id = claim.delivery.deliveryId;
    if (this.claims.get(id) !== claim.token) return;
    this.due.delete(id);
    this.jobs.delete(id);
    this.claims.delete(id);
    this.done.add(id);
  }

  async depth(): Promise<number> {
    return this.due.size;
  }
}

/** A sender whose answer per URL the test sets: a result, or a promise that never settles ('hang'). */
export class ScriptedSender implements Sender {
  readonly sent: Array<{ url: string; messageId: string; at: number }> = [];
  readonly answers = new Map<string, SendResult | 'hang'>();
  /** Settles the oldest hanging send. */
  readonly hanging: Array<(result: SendResult) => void> = [];
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  send(o: { url: string; secret: string; messageId: string; body: string; signal: AbortSignal }): Promise<SendResult> {
    this.sent.push({ url: o.url, messageId: o.messageId, at: this.#now() });
    const answer = this.answers.get(o.url) ?? { ok: true, status: 200, error: null };
    if (answer !== 'hang') return Promise.resolve(answer);
    return new Promise((resolve) => {
      this.hanging.push(resolve);
      o.signal.addEventListener('abort', () => resolve({ ok: false, status: null, error: 'aborted' }), { once: true });
    });
  }
}
