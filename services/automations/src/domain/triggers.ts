import { randomUUID } from 'node:crypto';
import { errors, isAppError } from '@workspace/platform';
import { isId, newId } from './ids.js';
import type { AgentDirectory, Clock, SecretBox, Scope, TriggerRecord, TriggerRepo } from './ports.js';
import { newSecret, verifySignature } from './signature.js';

/** Trigger names are at most 200 characters (docs/api/automations.md#webhook-triggers): that keeps them display-sized. */
export const TRIGGER_NAME_MAX = 200;

/** Webhook triggers of an Agent (docs/api/automations.md#webhook-triggers): create (secret shown once), list, delete, fire. */
export class Triggers {
  readonly #repo: TriggerRepo;
  readonly #agents: AgentDirectory;
  readonly #box: SecretBox;
  readonly #clock: Clock;
  readonly #max: number | undefined;
  readonly #onAliasGone: (run: { triggerId: string; agentId: string; alias: string }) => void;

  /**
   * `maxPerAgent`: MAX_TRIGGERS_PER_AGENT (docs/api/usage.md#quotas); unset: no limit.
   * `onAliasGone`: told of each call that started no chat because the trigger's alias is gone (for
   * logs and metrics).
   */
  constructor(deps: {
    repo: TriggerRepo;
    agents: AgentDirectory;
    box: SecretBox;
    clock?: Clock;
    maxPerAgent?: number | undefined;
    onAliasGone?: (run: { triggerId: string; agentId: string; alias: string }) => void;
  }) {
    this.#onAliasGone = deps.onAliasGone ?? (() => undefined);
    this.#repo = deps.repo;
    this.#agents = deps.agents;
    this.#box = deps.box;
    this.#clock = deps.clock ?? (() => new Date());
    this.#max = deps.maxPerAgent;
  }

  async create(scope: Scope, agentId: string, name = '', alias?: string): Promise<{ trigger: TriggerRecord; secret: string }> {
    if ([...name].length > TRIGGER_NAME_MAX) throw errors.invalidArgument(`name must be at most ${TRIGGER_NAME_MAX} characters`, 'name');
    await this.#agents.require(scope, agentId, alias);
    const trigger = { triggerId: newId('trg'), agentId, name, createdAt: this.#clock().toISOString(), alias: alias ?? null };
    const secret = newSecret();
    const stored = { ...trigger, sealedSecret: this.#box.seal(secret, trigger.triggerId) };
    const outcome = await this.#repo.create(scope.userId, stored, this.#max ?? 0);
    if (outcome.status === 'agent-deleted') throw errors.notFound('agent', agentId);
    if (outcome.status === 'quota') throw errors.quotaExceeded('MAX_TRIGGERS_PER_AGENT', this.#max ?? 0, outcome.used);
    return { trigger, secret };
  }

  async list(scope: Scope, agentId: string): Promise<TriggerRecord[]> {
    await this.#agents.require(scope, agentId);
    return this.#repo.list(scope.userId, agentId);
  }

  async delete(scope: Scope, agentId: string, triggerId: string): Promise<void> {
    await this.#agents.require(scope, agentId);
    const trigger = isId('trg', triggerId) ? await this.#repo.get(scope.userId, triggerId) : undefined;
    if (!trigger || trigger.agentId !== agentId) throw errors.notFound('trigger', triggerId);
    await this.#repo.delete(scope.userId, trigger);
  }

  /**
   * The unauthenticated hook: the trigger id finds the owner, the signature proves the caller
   * holds the secret. Unknown → TRIGGER_NOT_FOUND; bad or missing signature → UNAUTHENTICATED.
   * Then a chat starts as the owner, like a chat they started themselves.
   */
  async fire(triggerId: string, body: Uint8Array, signature: string, requestId?: string): Promise<{ trigger: TriggerRecord; chatId: string }> {
    const userId = isId('trg', triggerId) ? await this.#repo.ownerOf(triggerId) : undefined;
    const trigger = userId === undefined ? undefined : await this.#repo.get(userId, triggerId);
    if (!userId || !trigger) throw errors.notFound('trigger', triggerId);
    if (!verifySignature(this.#box.open(trigger.sealedSecret, triggerId), body, signature)) {
      throw errors.unauthenticated('X-Signature must be sha256=<hex HMAC-SHA256 of the raw body, keyed with the trigger secret>');
    }
    const scope = { userId, requestId };
    // One key per call: a transport-level retry of this very call starts no second chat.
    const idempotencyKey = `hook:${triggerId}:${randomUUID()}`;
    try {
      // Routed by the trigger's id: every call of one trigger gets the same config of a routed alias.
      const chat = { agentId: trigger.agentId, title: webhookTitle(trigger.name), idempotencyKey, alias: trigger.alias ?? undefined, routingKey: triggerId };
      const chatId = await this.#agents.startChat(scope, chat);
      return { trigger, chatId };
    } catch (err) {
      // Its alias was deleted meanwhile: no chat; the caller hears ALIAS_NOT_FOUND, the owner sees it in logs and metrics.
      if (isAppError(err) && err.code === 'ALIAS_NOT_FOUND') this.#onAliasGone({ triggerId, agentId: trigger.agentId, alias: trigger.alias ?? '' });
      // The Agent is gone and the cascade has not reached us yet: the trigger is gone too.
      if (isAppError(err) && err.code === 'AGENT_NOT_FOUND') throw errors.notFound('trigger', triggerId);
      throw err;
    }
  }
}

/** "Webhook: <name>", or plain "Webhook"; cut to the chat title limit (200). */
export function webhookTitle(name: string): string {
  return [...(name ? `Webhook: ${name}` : 'Webhook')].slice(0, 200).join('');
}
