import type { RedisClient, RedisOutbox } from '@workspace/platform';
import type { ImportRepo, NewImportedAgent } from '../domain/agent-import.js';
import type { CreateAgentOutcome } from '../domain/ports.js';
import { encodeAgent } from './agent-codec.js';
import { AGENT_KEY_TTL_MS } from './agent-repo.redis.js';
import { IMPORT_AGENT } from './import-agent.lua.js';
import { indexMember, keysOf } from './keys.js';

/** Imported Agents, written whole in one script (see IMPORT_AGENT). */
export class RedisAgentImport implements ImportRepo {
  readonly #redis: RedisClient;
  readonly #outbox: RedisOutbox;
  readonly #onEvents: (tag: string) => void;

  constructor(options: { redis: RedisClient; outbox: RedisOutbox; onEvents?: (tag: string) => void }) {
    this.#redis = options.redis;
    this.#outbox = options.outbox;
    this.#onEvents = options.onEvents ?? (() => undefined);
  }

  async create(request: NewImportedAgent): Promise<CreateAgentOutcome> {
    const { userId, agent, configs, aliases, events } = request;
    const k = keysOf(userId);
    await this.#outbox.register(k.tag);
    const id = agent.agentId;
    const hasKey = request.idempotencyKey !== undefined;
    const keys = [
      k.index, k.agent(id), k.configs(id), this.#outbox.listKey(k.tag), k.aliases(id), k.aliasHistory(id), k.pins(id),
      hasKey ? k.agentByKey(request.idempotencyKey!) : k.agent(id),
      ...configs.map((c) => k.config(c.configId)),
    ];
    const hash = Object.entries(encodeAgent(agent)).flat();
    // Per alias: name, record, its first period, and the configs it pins (space-separated: one, or every routed one).
    const aliasArgs = aliases.flatMap((a) => [
      a.alias, JSON.stringify(a), JSON.stringify([{ configId: a.configId, routing: a.routing, from: a.createdAt }]),
      (a.routing ?? [{ configId: a.configId }]).map((e) => e.configId).join(' '),
    ]);
    const args = [
      String(request.maxAgents ?? 0), indexMember(agent.createdAt, id), id, String(AGENT_KEY_TTL_MS), k.agent(''), hasKey ? '1' : '0',
      String(hash.length), ...hash,
      String(configs.length), ...configs.flatMap((c) => [c.configId, JSON.stringify(c)]),
      String(aliases.length), ...aliasArgs,
      ...this.#outbox.encode(events),
    ];
    const [status, value] = (await this.#redis.eval(IMPORT_AGENT, keys.length, ...keys, ...args)) as [number, number | string];
    if (status === 0) return { status: 'quota', used: Number(value) };
    if (status === 2) return { status: 'exists', agentId: String(value) };
    this.#onEvents(k.tag);
    return { status: 'created' };
  }
}
