import { conflictRetry, createEvent, luaScript, type RedisClient, type RedisOutbox, userTag, type WorkspaceEvent } from '@workspace/platform';
import type { ProjectRecord, ProjectRepo } from '../domain/ports.js';

const EVENT_SOURCE = '/workspace/projects';

/** KEYS: projects hash, outbox list. ARGV: field, record, event. Creates unless taken. */
const INSERT_SCRIPT = luaScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  return 1
end
return 0`);

/** KEYS: projects hash, outbox list. ARGV: field, value read, new value, event. Compare-and-set. */
const CAS_SCRIPT = luaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('RPUSH', KEYS[2], ARGV[4])
  return 1
end
return 0`);

/** KEYS: projects hash, outbox list. ARGV: field, event. */
const REMOVE_SCRIPT = luaScript(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[2])
  return 1
end
return 0`);

/** A compare-and-set that lost to another writer reads again, after a short jittered wait, up to 20 times. */
const conflicts = conflictRetry({ maxAttempts: 20, maxDelayMs: 50, store: 'the project store' });

/**
 * All projects of a user in one hash, `projects:{u:<tenant>}`, field = the case-folded name,
 * value = the record as JSON. Every write is one script that also appends its event to the
 * user's outbox list (same hash tag), so a change and its event are stored together or not at
 * all; the relay publishes them to NATS.
 */
export class RedisProjectRepo implements ProjectRepo {
  readonly #redis: RedisClient;
  readonly #outbox: RedisOutbox;
  readonly #onEvents: (tag: string) => void;

  constructor(options: { redis: RedisClient; outbox: RedisOutbox; onEvents?: (tag: string) => void }) {
    this.#redis = options.redis;
    this.#outbox = options.outbox;
    this.#onEvents = options.onEvents ?? (() => undefined);
  }

  #key(userId: string): string {
    return `projects:${userTag(userId)}`;
  }

  /** Registers the user's outbox, runs one write script, and wakes the relay if it wrote. */
  async #write(userId: string, script: string, args: string[]): Promise<boolean> {
    const tag = userTag(userId);
    await this.#outbox.register(tag);
    const written = (await this.#redis.eval(script, 2, this.#key(userId), this.#outbox.listKey(tag), ...args)) === 1;
    if (written) this.#onEvents(tag);
    return written;
  }

  #event(type: 'project.created' | 'project.updated', userId: string, record: ProjectRecord): string {
    const event: WorkspaceEvent = createEvent(type, { source: EVENT_SOURCE, subject: record.name, data: { userId, name: record.name, archived: record.archived } });
    return JSON.stringify(event);
  }

  async insert(userId: string, key: string, record: ProjectRecord): Promise<boolean> {
    return this.#write(userId, INSERT_SCRIPT, [key, JSON.stringify(record), this.#event('project.created', userId, record)]);
  }

  async get(userId: string, key: string): Promise<ProjectRecord | undefined> {
    const raw = await this.#redis.hget(this.#key(userId), key);
    return raw === null ? undefined : (JSON.parse(raw) as ProjectRecord);
  }

  async list(userId: string): Promise<ProjectRecord[]> {
    const all = await this.#redis.hvals(this.#key(userId));
    return all.map((raw) => JSON.parse(raw) as ProjectRecord);
  }

  async remove(userId: string, key: string): Promise<void> {
    const record = await this.get(userId, key);
    if (!record) return;
    const event = createEvent('project.deleted', { source: EVENT_SOURCE, subject: record.name, data: { userId, name: record.name } });
    await this.#write(userId, REMOVE_SCRIPT, [key, JSON.stringify(event)]);
  }

  async update(userId: string, key: string, change: (current: ProjectRecord) => ProjectRecord): Promise<ProjectRecord | undefined> {
    const hash = this.#key(userId);
    return conflicts<ProjectRecord | undefined>(async () => {
      const raw = await this.#redis.hget(hash, key);
      if (raw === null) return { committed: true, value: undefined };
      const current = JSON.parse(raw) as ProjectRecord;
      const next = change(current);
      if (next === current) return { committed: true, value: current };
      const committed = await this.#write(userId, CAS_SCRIPT, [key, raw, JSON.stringify(next), this.#event('project.updated', userId, next)]);
      return { committed, value: next };
    });
  }
}
