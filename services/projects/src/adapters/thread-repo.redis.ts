import { EVENT_MAX_AGE_MS, luaScript, type RedisClient, tombstone, TOMBSTONED_LUA, userTag } from '@workspace/platform';
import type { ThreadRepo, ThreadSummary } from '../domain/ports.js';

/**
 * Adds a thread unless its Agent is tombstoned: events of one Agent reach us on different
 * durables (chats.created, agents.deleted), so a creation may arrive after the deletion.
 * KEYS: threads hash, agent index set, tombstone set. ARGV: chatId, summary JSON, agentId, member.
 */
const ADD_SCRIPT = luaScript(`${TOMBSTONED_LUA}
if tombstoned(KEYS[3], ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
return 1`);

/**
 * Per user (one hash tag, so the scripts run on Redis Cluster): `threads:{u}:<project key>`
 * hash chatId → summary; `agent-threads:{u}:<agentId>` set of `<project key>\n<chatId>` for the
 * cascade; `thread-tombstones:{u}` the deleted Agents, each for as long as the event stream keeps
 * events (a chat's creation older than that can no longer arrive).
 */
export class RedisThreadRepo implements ThreadRepo {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  #threads(userId: string, projectKey: string) {
    return `threads:${userTag(userId)}:${projectKey}`;
  }

  #byAgent(userId: string, agentId: string) {
    return `agent-threads:${userTag(userId)}:${agentId}`;
  }

  #tombstones(userId: string) {
    return `thread-tombstones:${userTag(userId)}`;
  }

  async add(userId: string, projectKey: string, thread: ThreadSummary): Promise<boolean> {
    const keys = [this.#threads(userId, projectKey), this.#byAgent(userId, thread.agentId), this.#tombstones(userId)];
    const added = await this.#redis.eval(ADD_SCRIPT, keys.length, ...keys, thread.threadId, JSON.stringify(thread), thread.agentId, `${projectKey}\n${thread.threadId}`);
    return added === 1;
  }

  async removeAgent(userId: string, agentId: string): Promise<void> {
    const index = this.#byAgent(userId, agentId);
    await tombstone(this.#redis, this.#tombstones(userId), agentId, EVENT_MAX_AGE_MS);
    const members = await this.#redis.smembers(index);
    const multi = this.#redis.multi();
    for (const member of members) {
      const [projectKey = '', chatId = ''] = member.split('\n');
      multi.hdel(this.#threads(userId, projectKey), chatId);
    }
    // The tombstone comes first: a thread added after it is refused, one added before is in
    // the index read here. Deleting the index last keeps it for a retry if this step fails.
    await multi.del(index).exec();
  }

  async forProjects(userId: string, projectKeys: readonly string[]): Promise<ThreadSummary[][]> {
    if (projectKeys.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const key of projectKeys) pipeline.hvals(this.#threads(userId, key));
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, values]) => {
      if (err) throw err;
      return (values as string[]).map((raw) => JSON.parse(raw) as ThreadSummary).sort(newestFirst);
    });
  }
}

function newestFirst(a: ThreadSummary, b: ThreadSummary): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.threadId < b.threadId ? 1 : -1;
}
