// The Redis work of the Agent floors (floor-server.mjs): what the agents service does against
// Redis per GET and per PATCH — the same commands with values of the same sizes, on the floor's
// own keys — and nothing else: no domain rules, no digest, no logging, no outbox relay.
import { randomBytes, randomUUID } from 'node:crypto';
import { conflictRetry } from '@workspace/platform';
import { queueIndexSet } from '@workspace/agents/search-index';

/** The service's defaults: configurations kept per Agent (CONFIG_RETENTION), WATCH connections per process. */
const RETENTION = 100;
const WATCH_CONNECTIONS = 8;
/** The agents repository's retry of lost WATCH races (agent-repo.redis.ts). */
const conflicts = conflictRetry({ maxAttempts: 50, maxDelayMs: 50, store: 'the floor store' });

/** The agents service's key layout (services/agents keys.ts), under `bench-floor:{<run>}`. */
export function floorKeys(run) {
  const base = `bench-floor:{${run}}`;
  return {
    base,
    agent: (agentId) => `${base}:agent:${agentId}`,
    configs: (agentId) => `${base}:configs:${agentId}`,
    config: (configId) => `${base}:config:${configId}`,
    pins: (agentId) => `${base}:pins:${agentId}`,
    outbox: `${base}:outbox`,
    index: `${base}:agents`,
    chats: (agentId) => `${base}:chats:${agentId}`,
    chat: (chatId) => `${base}:chat:${chatId}`,
    aliases: (agentId) => `${base}:aliases:${agentId}`,
    aliasStats: (agentId) => `${base}:alias-stats:${agentId}`,
    schedules: (agentId) => `${base}:schedules:${agentId}`,
    search: { docs: `${base}:q:docs`, gram: (trigram) => `${base}:q:gram:${trigram}` },
  };
}

/** The `q` index text of a config, normalized as the service does (near enough: same sizes). */
const searchText = (config) => ({ searchName: config.name.toLowerCase(), searchDescription: config.description.toLowerCase() });

/** The Agent hash the service keeps (agent-codec.ts encodeAgent), for the Agent `body` (a GET answer) on `configId`. */
function agentHash(body, agentId, configId) {
  const { config } = body;
  return {
    agentId,
    currentConfigId: configId,
    state: body.state,
    createdAt: body.createdAt,
    updatedAt: body.updatedAt,
    lastChatAt: '',
    chatCount: String(body.chatCount ?? 0),
    name: config.name,
    description: config.description,
    projectName: config.projectName,
    responseMode: config.responseMode,
    ...searchText(config),
    configSeq: '1',
  };
}

/** Writes `agents` ([{agentId, configId}]) as the service stores a new Agent: its hash, config, version index and `q` index. */
export async function seedAgents(redis, keys, body, agents) {
  const tx = redis.multi();
  for (const { agentId, configId } of agents) {
    tx.hset(keys.agent(agentId), agentHash(body, agentId, configId));
    tx.set(keys.config(configId), JSON.stringify({ ...body.config, agentId, configId }));
    tx.zadd(keys.configs(agentId), 1, configId);
    queueIndexSet(tx, keys.search, keys.agent(agentId), agentId, searchText(body.config));
  }
  await tx.exec();
}

/**
 * The index of a user's Agents as the service keeps it (members `<createdAt>|<agentId>`, newest
 * first by rank): `total` members, the newest of which are the Agents `listed` (a GET /v1/agents
 * answer's `agents`), each with its hash. The rest are index members only: a page reads none of them.
 */
export async function seedIndex(redis, keys, body, listed, total) {
  const tx = redis.multi();
  const members = [];
  for (let i = 0; i < total - listed.length; i++) members.push(0, `2000-01-01T00:00:00.000Z|agt_${String(i).padStart(32, '0')}`);
  listed.forEach((a, i) => {
    members.push(0, `2999-01-01T00:00:${String(i).padStart(2, '0')}.000Z|${a.agentId}`);
    tx.hset(keys.agent(a.agentId), agentHash(body, a.agentId, a.currentConfigId ?? 'cfg'));
  });
  for (let i = 0; i < members.length; i += 2_000) tx.zadd(keys.index, ...members.slice(i, i + 2_000));
  await tx.exec();
}

/**
 * A page of the list as the services read it: the agents service's count, rank range and one
 * pipelined HGETALL per Agent on it (agent-reads.redis.ts page), then the schedule summaries the
 * gateway asks of the automations service for the page, one pipelined ZRANGE per Agent
 * (schedule-repo.redis.ts summarize; with no schedules, nothing more).
 */
export async function readPage(redis, keys, offset, limit) {
  const total = await redis.zcard(keys.index);
  const members = await redis.zrevrange(keys.index, offset, offset + limit - 1);
  const ids = members.map((m) => m.slice(m.lastIndexOf('|') + 1));
  const agents = redis.pipeline();
  for (const id of ids) agents.hgetall(keys.agent(id));
  await agents.exec();
  const schedules = redis.pipeline();
  for (const id of ids) schedules.zrange(keys.schedules(id), '0', '-1');
  await schedules.exec();
  return total;
}

/** Gives each seeded Agent ([{agentId, configId}]) the plain alias `alias` on its config. */
export async function seedAliases(redis, keys, agents, alias) {
  const tx = redis.multi();
  for (const { agentId, configId } of agents) tx.hset(keys.aliases(agentId), alias, JSON.stringify({ configId, updatedAt: new Date().toISOString() }));
  await tx.exec();
}

/**
 * A chat started through an alias as the agents service starts one (RedisAgentRepo.createChat):
 * WATCH the Agent hash, read it, the alias and the config it names, then MULTI/EXEC the chat, its
 * index entry, the Agent's count and last chat time, the pin, the alias's stats and the outbox
 * event. → the chat record, or undefined for an unknown Agent or alias.
 */
export function floorChats(redis, keys) {
  const conns = new WatchConnections(redis);
  const userId = `bench-floor-${randomUUID()}`;
  return {
    close: () => conns.close(),
    create: (agentId, alias, title) =>
      conflicts(() =>
        conns.run(keys.agent(agentId), async (conn) => {
          const agent = await conn.hgetall(keys.agent(agentId));
          if (!agent.agentId) return { value: undefined };
          const raw = await conn.hget(keys.aliases(agentId), alias);
          if (raw === null) return { value: undefined };
          const { configId } = JSON.parse(raw);
          const config = JSON.parse(await conn.get(keys.config(configId)));
          const at = new Date().toISOString();
          const record = { chatId: `cht_${randomBytes(16).toString('hex')}`, agentId, configId, projectName: config.projectName, title, createdAt: at, updatedAt: at, alias };
          const event = { specversion: '1.0', id: randomUUID(), type: 'chat.created', source: '/workspace/agents', time: at, subject: record.chatId, data: { userId, ...record } };
          return {
            value: record,
            write: (tx) => {
              tx.set(keys.chat(record.chatId), JSON.stringify(record));
              tx.zadd(keys.chats(agentId), 0, `${at}|${record.chatId}`);
              tx.hincrby(keys.agent(agentId), 'chatCount', 1);
              tx.hset(keys.agent(agentId), 'lastChatAt', at);
              tx.hincrby(keys.pins(agentId), configId, 1);
              tx.hincrby(keys.aliasStats(agentId), `${alias}|${configId}`, 1);
              tx.rpush(keys.outbox, JSON.stringify(event));
            },
          };
        }),
      ),
  };
}

/** Removes every key of the run (SCAN, never KEYS: Redis is shared). */
export async function dropKeys(redis, keys) {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${keys.base}:*`, 'COUNT', 1000);
    if (found.length > 0) await redis.unlink(...found);
    cursor = next;
  } while (cursor !== '0');
}

/** WATCH/MULTI on dedicated connections, reused: the service's WatchPool without its bookkeeping. */
class WatchConnections {
  #idle = [];
  #waiting = [];
  #open = 0;

  constructor(redis) {
    this.redis = redis;
  }

  async run(key, plan) {
    const conn = await this.#acquire();
    let reusable = false;
    try {
      const watched = conn.watch(key);
      const { value, write } = await plan(conn);
      await watched;
      if (!write) {
        await conn.unwatch();
        reusable = true;
        return { committed: true, value };
      }
      const tx = conn.multi();
      write(tx);
      const results = await tx.exec();
      reusable = true;
      return { committed: results !== null, value };
    } finally {
      this.#release(conn, reusable);
    }
  }

  async close() {
    await Promise.all(this.#idle.map((c) => c.quit()));
  }

  /** A connection left mid-transaction by an error is dropped (its WATCH state is unknown). */
  #release(conn, reusable) {
    if (!reusable) {
      conn.disconnect();
      this.#open--;
      if (this.#waiting.length === 0) return;
      this.#open++;
      conn = this.redis.duplicate();
    }
    const next = this.#waiting.shift();
    if (next) next(conn);
    else this.#idle.push(conn);
  }

  async #acquire() {
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#open < WATCH_CONNECTIONS) {
      this.#open++;
      return this.redis.duplicate();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/**
 * The config commit of a PATCH as the agents service makes it (Agents.update, then
 * RedisAgentRepo.commitConfig): read the Agent (stale → stop), then WATCH its hash, read the hash,
 * the version index, the pins and the `q` membership in one round trip, and MULTI/EXEC the new
 * config, its version, the hash, retention's deletes, the outbox event and the `q` index change.
 * Of concurrent commits on one base exactly one wins; the others find the Agent stale.
 */
export class FloorCommits {
  #redis;
  #keys;
  #body;
  #userId = `bench-floor-${randomUUID()}`;
  #conns;

  constructor(redis, keys, body) {
    this.#redis = redis;
    this.#keys = keys;
    this.#body = body;
    this.#conns = new WatchConnections(redis);
  }

  /** → {status: 'committed', configId} | {status: 'stale', currentConfigId} | {status: 'gone'}. */
  async commit(agentId, baseConfigId, description) {
    const k = this.#keys;
    const current = await this.#redis.hgetall(k.agent(agentId));
    if (!current.agentId) return { status: 'gone' };
    if (current.currentConfigId !== baseConfigId) return { status: 'stale', currentConfigId: current.currentConfigId };
    const configId = `cfg_${randomBytes(16).toString('hex')}`;
    const at = new Date().toISOString();
    const config = { ...this.#body.config, agentId, configId, description, createdAt: at, parentConfigId: baseConfigId };
    const after = searchText(config);
    const event = { specversion: '1.0', id: randomUUID(), type: 'agent.updated', source: '/workspace/agents', time: at, subject: agentId, data: { userId: this.#userId, agentId, configId, projectName: config.projectName } };
    return conflicts(() =>
      this.#conns.run(k.agent(agentId), async (conn) => {
        const [hash, stored, , indexed] = await Promise.all([conn.hgetall(k.agent(agentId)), conn.zrange(k.configs(agentId), '0', '-1'), conn.hgetall(k.pins(agentId)), conn.sismember(k.search.docs, agentId)]);
        if (!hash.agentId) return { value: { status: 'gone' } };
        if (hash.currentConfigId !== baseConfigId) return { value: { status: 'stale', currentConfigId: hash.currentConfigId } };
        // No chat pins a floor config: retention drops the oldest beyond RETENTION.
        const expired = stored.slice(0, Math.max(0, stored.length + 1 - RETENTION));
        const seq = Number(hash.configSeq) + 1;
        return {
          value: { status: 'committed', configId },
          write: (tx) => {
            tx.set(k.config(configId), JSON.stringify(config));
            tx.zadd(k.configs(agentId), seq, configId);
            tx.hset(k.agent(agentId), { currentConfigId: configId, updatedAt: at, configSeq: String(seq), name: config.name, description, projectName: config.projectName, responseMode: config.responseMode, ...after });
            if (expired.length > 0) {
              tx.del(...expired.map((id) => k.config(id)));
              tx.zrem(k.configs(agentId), ...expired);
            }
            tx.rpush(k.outbox, JSON.stringify(event));
            queueIndexSet(tx, k.search, k.agent(agentId), agentId, after, indexed === 1 ? { searchName: hash.searchName, searchDescription: hash.searchDescription } : undefined);
          },
        };
      }),
    );
  }

  async close() {
    await this.#conns.close();
  }
}
