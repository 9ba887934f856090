import { createEvent, errors } from '@workspace/platform';
import { EVENT_SOURCE, type Agents } from './agents.js';
import { ALIAS_NAME } from './aliases.js';
import { isId, newId } from './ids.js';
import type { AgentConfig, AgentRecord, AgentRepo, ChatRecord, Clock, Scope } from './ports.js';
import { pickAtRandom, pickByKey, ROUTING_KEY_MAX, type RouteEntry } from './rollout.js';
import { charCount, hasLoneSurrogate } from './text.js';

export const DEFAULT_CHAT_TITLE = 'New chat';
export const CHAT_TITLE_MAX = 200;
export const IDEMPOTENCY_KEY_MAX = 200;

export interface ChatInput {
  title?: string | undefined;
  idempotencyKey?: string | undefined;
  alias?: string | undefined;
  /** Through a routed alias: the same key gets the same config while the routing is unchanged. */
  routingKey?: string | undefined;
}

/** Chats of an Agent (docs/api/automations.md#chats): each pins the config that was current when it started. */
export class Chats {
  readonly #repo: AgentRepo;
  readonly #agents: Agents;
  readonly #now: Clock;
  readonly #random: () => number;

  /** `random`: the draw for chats through a routed alias without a routing key (tests fix it). */
  constructor(options: { repo: AgentRepo; agents: Agents; clock?: Clock; random?: () => number }) {
    this.#repo = options.repo;
    this.#agents = options.agents;
    this.#now = options.clock ?? (() => new Date());
    this.#random = options.random ?? Math.random;
  }

  /** With `idempotencyKey`, a repeat for the same Agent returns the first call's chat (see AgentRepo.createChat). */
  async create(scope: Scope, agentId: string, input: ChatInput = {}): Promise<ChatRecord> {
    const { idempotencyKey, alias, routingKey } = input;
    const title = input.title ?? DEFAULT_CHAT_TITLE;
    if (!fits(title, CHAT_TITLE_MAX)) throw errors.invalidArgument(`title must be 1–${CHAT_TITLE_MAX} characters`, 'title');
    if (idempotencyKey !== undefined && !fits(idempotencyKey, IDEMPOTENCY_KEY_MAX)) {
      throw errors.invalidArgument(`idempotencyKey must be 1–${IDEMPOTENCY_KEY_MAX} characters`, 'idempotencyKey');
    }
    if (routingKey !== undefined && !fits(routingKey, ROUTING_KEY_MAX)) {
      throw errors.invalidArgument(`routingKey must be 1–${ROUTING_KEY_MAX} characters`, 'routingKey');
    }
    await this.#agents.require(scope, agentId);
    if (alias !== undefined && !ALIAS_NAME.test(alias)) throw errors.notFound('alias', alias);
    const chatId = newId('cht');
    const make = (agent: AgentRecord, aliased?: AgentConfig) => {
      // Built from the Agent as the transaction saw it, so the pin is the config current (or aliased) at commit.
      const at = this.#now().toISOString();
      const configId = aliased?.configId ?? agent.currentConfigId;
      const projectName = aliased?.projectName ?? agent.summary.projectName;
      const record: ChatRecord = { chatId, agentId, configId, projectName, title, createdAt: at, updatedAt: at, alias: alias ?? null };
      const event = createEvent('chat.created', { source: EVENT_SOURCE, subject: chatId, time: at, data: { userId: scope.userId, ...record } });
      return { chat: record, events: [event] };
    };
    // Sticky by key (weighted rendezvous), else a draw by weight; a plain alias ignores both.
    const pick = (routing: readonly RouteEntry[]) => (routingKey === undefined ? pickAtRandom(routing, this.#random) : pickByKey(routing, routingKey));
    const chat = await this.#repo.createChat({ userId: scope.userId, agentId, idempotencyKey, alias, pick, make });
    if (chat === null) throw errors.notFound('alias', alias ?? '');
    if (!chat) throw errors.notFound('agent', agentId);
    return chat;
  }

  async list(scope: Scope, agentId: string): Promise<ChatRecord[]> {
    await this.#agents.require(scope, agentId);
    return this.#repo.listChats(scope.userId, agentId);
  }

  /** The chat with the config it pins (kept alive by the pin even after later updates). */
  async get(scope: Scope, agentId: string, chatId: string): Promise<{ chat: ChatRecord; config: AgentConfig }> {
    await this.#agents.require(scope, agentId);
    const chat = isId('cht', chatId) ? await this.#repo.getChat(scope.userId, chatId) : undefined;
    if (!chat || chat.agentId !== agentId) throw errors.notFound('chat', chatId);
    return { chat, config: await this.#agents.config(scope, agentId, chat.configId) };
  }
}

/** 1 to `max` characters (code points), no lone surrogate. */
function fits(text: string, max: number): boolean {
  return !hasLoneSurrogate(text) && charCount(text) >= 1 && charCount(text) <= max;
}
