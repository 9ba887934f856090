import type { RedisClient } from '@workspace/platform';
import type { AttemptEntry, AttemptVerdict, CreateOutcome, StoredWebhook, WebhookChanges, WebhookRepo } from '../domain/ports.js';
import { userKeys } from './keys.js';
import { CREATE, RECORD_ATTEMPT, UPDATE } from './webhook.lua.js';

/** A webhook as hash fields. */
function toFields(w: Partial<StoredWebhook>): string[] {
  const fields: Array<[string, string | undefined]> = [
    ['webhookId', w.webhookId],
    ['url', w.url],
    ['events', w.events && JSON.stringify(w.events)],
    ['description', w.description],
    ['enabled', w.enabled === undefined ? undefined : w.enabled ? '1' : '0'],
    ['createdAt', w.createdAt],
    ['sealedSecret', w.sealedSecret],
  ];
  return fields.flatMap(([k, v]) => (v === undefined ? [] : [k, v]));
}

function fromHash(h: Record<string, string>): StoredWebhook | undefined {
  if (!h.webhookId) return undefined;
  return {
    webhookId: h.webhookId,
    url: h.url ?? '',
    events: JSON.parse(h.events ?? '[]') as string[],
    description: h.description ?? '',
    enabled: h.enabled === '1',
    createdAt: h.createdAt ?? '',
    sealedSecret: h.sealedSecret ?? '',
    failingSince: h.failingSince ? Number(h.failingSince) : undefined,
  };
}

function pairsToHash(reply: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) out[reply[i]!] = reply[i + 1]!;
  return out;
}

/** Webhooks in Redis: a hash each and an index, under the user's hash tag; changes are scripts. */
export class RedisWebhookRepo implements WebhookRepo {
  readonly #redis: RedisClient;
  readonly #namespace: string;

  /** `namespace`: WEBHOOK_NAMESPACE, the prefix of every key (see `userKeys`). */
  constructor(redis: RedisClient, namespace: string) {
    this.#redis = redis;
    this.#namespace = namespace;
  }

  async create(userId: string, w: StoredWebhook, max: number): Promise<CreateOutcome> {
    const keys = userKeys(this.#namespace, userId);
    const [stored, count] = (await this.#redis.eval(CREATE, 2, keys.webhook(w.webhookId), keys.webhooks, w.webhookId, String(Date.parse(w.createdAt)), String(max), ...toFields(w))) as [number, number];
    return stored === 1 ? { status: 'created' } : { status: 'quota', used: count };
  }

  async list(userId: string): Promise<StoredWebhook[]> {
    const keys = userKeys(this.#namespace, userId);
    const ids = await this.#redis.zrevrange(keys.webhooks, 0, -1);
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hgetall(keys.webhook(id));
    const replies = (await pipeline.exec()) ?? [];
    return replies.flatMap(([err, h]) => {
      if (err) throw err;
      const w = fromHash(h as Record<string, string>);
      return w ? [w] : [];
    });
  }

  async get(userId: string, webhookId: string): Promise<StoredWebhook | undefined> {
    return fromHash(await this.#redis.hgetall(userKeys(this.#namespace, userId).webhook(webhookId)));
  }

  async update(userId: string, webhookId: string, changes: WebhookChanges): Promise<StoredWebhook | undefined> {
    const fields = toFields(changes);
    // Enabling again restarts the failure clock: the 5 days count from the next failure.
    if (changes.enabled === true) fields.push('failingSince', '');
    const reply = (await this.#redis.eval(UPDATE, 1, userKeys(this.#namespace, userId).webhook(webhookId), ...fields)) as string[] | null;
    return reply === null ? undefined : fromHash(pairsToHash(reply));
  }

  async delete(userId: string, webhookId: string): Promise<boolean> {
    const keys = userKeys(this.#namespace, userId);
    const replies = await this.#redis.multi().del(keys.webhook(webhookId)).zrem(keys.webhooks, webhookId).del(keys.log(webhookId)).exec();
    return Number(replies?.[0]?.[1] ?? 0) > 0;
  }

  async attempts(userId: string, webhookId: string): Promise<AttemptEntry[]> {
    const raw = await this.#redis.zrevrange(userKeys(this.#namespace, userId).log(webhookId), 0, -1);
    return raw.map((r) => JSON.parse(r) as AttemptEntry);
  }

  async recordAttempt(o: { userId: string; webhookId: string; entry: AttemptEntry; ok: boolean; nowMs: number; disableAfterMs: number; keep: number }): Promise<AttemptVerdict> {
    const keys = userKeys(this.#namespace, o.userId);
    const args = [JSON.stringify(o.entry), o.ok ? '1' : '0', String(o.nowMs), String(o.disableAfterMs), String(o.keep)];
    return (await this.#redis.eval(RECORD_ATTEMPT, 2, keys.webhook(o.webhookId), keys.log(o.webhookId), ...args)) as AttemptVerdict;
  }
}
