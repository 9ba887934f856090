import { AesGcmSecretBox, errors, type SecretBox } from '@workspace/platform';
import { unknownEventType, EVENT_TYPES } from './event-types.js';
import { isWebhookId, newWebhookId, newWebhookSecret } from './ids.js';
import type { AttemptEntry, Scope, StoredWebhook, WebhookChanges, WebhookRecord, WebhookRepo } from './ports.js';
import type { UrlGuard } from './url-guard.js';

/** A description is at most 1,000 characters (docs/api/webhooks.md#fields): that keeps it a note. */
export const DESCRIPTION_MAX = 1_000;
/** At most this many entries in `events` (the known types, `*`, and room for duplicates). */
export const EVENTS_MAX = 50;

/** The input of create, and of PATCH where present. */
export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | undefined;
}

/**
 * A user's outbound webhooks (docs/api/webhooks.md): create (secret shown once), list, get, PATCH,
 * delete, and the delivery log. Every rule on the input is decided here.
 */
export class Webhooks {
  readonly #repo: WebhookRepo;
  readonly #guard: UrlGuard;
  readonly #box: SecretBox;
  readonly #max: number;
  readonly #clock: () => Date;

  /** `max`: MAX_WEBHOOKS (docs/api/usage.md#quotas). */
  constructor(deps: { repo: WebhookRepo; guard: UrlGuard; box?: SecretBox; max: number; clock?: () => Date }) {
    this.#repo = deps.repo;
    this.#guard = deps.guard;
    this.#box = deps.box ?? new AesGcmSecretBox(undefined, 'WEBHOOK_SECRET_KEY');
    this.#max = deps.max;
    this.#clock = deps.clock ?? (() => new Date());
  }

  async create(scope: Scope, input: WebhookInput): Promise<{ webhook: WebhookRecord; secret: string }> {
    const description = input.description ?? '';
    checkDescription(description);
    const events = checkEvents(input.events);
    await this.#checkUrl(input.url);
    const webhookId = newWebhookId();
    const secret = newWebhookSecret();
    const webhook: WebhookRecord = { webhookId, url: input.url, events, description, enabled: true, createdAt: this.#clock().toISOString() };
    const outcome = await this.#repo.create(scope.userId, { ...webhook, sealedSecret: this.#box.seal(secret, webhookId) }, this.#max);
    if (outcome.status === 'quota') throw errors.quotaExceeded('MAX_WEBHOOKS', this.#max, outcome.used);
    return { webhook, secret };
  }

  async list(scope: Scope): Promise<WebhookRecord[]> {
    return (await this.#repo.list(scope.userId)).map(publicView);
  }

  async get(scope: Scope, webhookId: string): Promise<WebhookRecord> {
    return publicView(await this.#require(scope, webhookId));
  }

  async update(scope: Scope, webhookId: string, changes: WebhookChanges): Promise<WebhookRecord> {
    if (!isWebhookId(webhookId)) throw errors.notFound('webhook', webhookId);
    if (changes.description !== undefined) checkDescription(changes.description);
    const events = changes.events === undefined ? undefined : checkEvents(changes.events);
    if (changes.url !== undefined) await this.#checkUrl(changes.url);
    const updated = await this.#repo.update(scope.userId, webhookId, { ...changes, events });
    if (!updated) throw errors.notFound('webhook', webhookId);
    return publicView(updated);
  }

  async delete(scope: Scope, webhookId: string): Promise<void> {
    if (!isWebhookId(webhookId) || !(await this.#repo.delete(scope.userId, webhookId))) throw errors.notFound('webhook', webhookId);
  }

  async deliveries(scope: Scope, webhookId: string): Promise<AttemptEntry[]> {
    await this.#require(scope, webhookId);
    return this.#repo.attempts(scope.userId, webhookId);
  }

  async #require(scope: Scope, webhookId: string): Promise<StoredWebhook> {
    const webhook = isWebhookId(webhookId) ? await this.#repo.get(scope.userId, webhookId) : undefined;
    if (!webhook) throw errors.notFound('webhook', webhookId);
    return webhook;
  }

  async #checkUrl(url: string): Promise<void> {
    const problem = await this.#guard.problem(url);
    if (problem) throw errors.invalidArgument(problem, 'url');
  }
}

function checkDescription(description: string): void {
  if ([...description].length > DESCRIPTION_MAX) throw errors.invalidArgument(`description must be at most ${DESCRIPTION_MAX} characters`, 'description');
}

/** At least one, each a known type or `*`; duplicates dropped, order kept. */
function checkEvents(events: readonly string[]): string[] {
  if (events.length === 0) throw errors.invalidArgument('events must list at least one event type, or "*"', 'events');
  if (events.length > EVENTS_MAX) throw errors.invalidArgument(`events must list at most ${EVENTS_MAX} entries`, 'events');
  const unknown = unknownEventType(events);
  if (unknown !== undefined) throw errors.invalidArgument(`unknown event type "${[...unknown].slice(0, 64).join('')}"; known: ${EVENT_TYPES.join(', ')} or "*"`, 'events');
  return [...new Set(events)];
}

function publicView(w: StoredWebhook): WebhookRecord {
  return { webhookId: w.webhookId, url: w.url, events: w.events, description: w.description, enabled: w.enabled, createdAt: w.createdAt };
}
