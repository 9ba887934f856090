import { randomBytes } from 'node:crypto';
import { errors, luaScript, userTag, type RedisClient } from '@workspace/platform';

/** What a session remembers between requests, whichever replica serves them. */
export interface McpSession {
  id: string;
  userId: string;
  protocolVersion: string;
  clientInfo: unknown;
  capabilities: unknown;
  /** The least severity of `notifications/message` the client wants (logging/setLevel). */
  logLevel: string;
  createdAt: string;
}

/** An idle session lives this long; every request starts the time again. */
export const SESSION_TTL_S = 24 * 3600;

/**
 * Subscriptions one session may hold: the GET stream reads them all back for every batch of
 * changes and matches each change against each, so a client may not grow them without end.
 */
export const MAX_SUBSCRIPTIONS = 1_000;

/**
 * Sessions one user may hold at once. A client that never sends DELETE (most end by exiting)
 * would otherwise leave a session per initialize in Redis for a day: beyond this, opening one
 * ends the user's least recently used, whose client then sees 404 and, as the transport says,
 * starts anew.
 */
export const MAX_SESSIONS_PER_USER = 100;

/**
 * How stale a session's place in its user's set may get: a request moves it to the front at
 * most this often per replica, so the set costs one command per session per interval, not one
 * per request. An id older than SESSION_TTL_S plus this names a session that has expired.
 */
const TOUCH_EVERY_MS = 10 * 60_000;
/** The user's set outlives the newest use of any of its sessions. */
const SET_TTL_S = SESSION_TTL_S + TOUCH_EVERY_MS / 1000;

/**
 * KEYS: the user's sessions (a sorted set of ids by last use); ARGV: the new id, now (ms), a
 * session's lifetime in seconds, the cap, the staleness of a last use (ms), the set's lifetime
 * in seconds. Forgets the ids of expired sessions, adds the new one, renews the set's lifetime,
 * and pops and answers the ids of the least recently used beyond the cap (never the new one),
 * for the caller to end.
 */
const ADMIT = luaScript(`local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[3]) * 1000 - tonumber(ARGV[5])))
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[6])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if excess <= 0 then return {} end
local oldest = redis.call('ZRANGE', KEYS[1], 0, excess - 1)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1)
return oldest`);

/** KEYS: the user's sessions; ARGV: the id, now (ms), the set's lifetime in seconds. Puts the id at the front, the set's lifetime renewed. */
const TOUCH = luaScript(`redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`);

/** KEYS: the subscriptions; ARGV: the path, the most a session holds, the lifetime. 1 when subscribed (or already), 0 when full. */
const SUBSCRIBE = luaScript(`if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 and redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`);

/**
 * KEYS: the session and its other keys; ARGV: the lifetime in seconds. The session (JSON), its
 * keys' lifetimes renewed; nil when there is none.
 */
const GET_AND_RENEW = luaScript(`local raw = redis.call('GET', KEYS[1])
if not raw then return false end
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
return raw`, { allowOom: true });

/** KEYS: the cursor, the stream owner; ARGV: owner, from, to, lifetime. 1 when moved. */
const ADVANCE = luaScript(`if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'EX', ARGV[4])
return 1`);

/** KEYS: the stream owner; ARGV: the owner. Drops it only when it is still that owner. */
const RELEASE_STREAM = luaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`, { allowOom: true });

/**
 * Sessions of the MCP endpoint in the Redis every gateway replica shares (docs/api/mcp.md#sessions):
 * the session itself, its subscriptions, the changes cursor its notifications continue from, and
 * which GET stream currently delivers them. Keys share one hash tag so a cluster keeps them together.
 */
export class SessionStore {
  /** When this replica last moved each session to the front of its user's set (bounded: cleared when full). */
  private readonly touched = new Map<string, number>();

  constructor(private readonly redis: RedisClient) {}

  private key(id: string, part: 'session' | 'subs' | 'cursor' | 'stream'): string {
    return `mcp:{${id}}:${part}`;
  }

  private keys(id: string): string[] {
    return (['session', 'subs', 'cursor', 'stream'] as const).map((p) => this.key(id, p));
  }

  /** The ids of a user's sessions by last use; in the user's slot, apart from the sessions' own. */
  private userKey(userId: string): string {
    return `mcp:${userTag(userId)}:sessions`;
  }

  /**
   * Opens a session; when that takes its user past MAX_SESSIONS_PER_USER, the least recently
   * used end. Two steps, since the user's set and each session live in different slots: a crash
   * between them leaves sessions that expire as any other.
   */
  async create(fields: Omit<McpSession, 'id' | 'createdAt' | 'logLevel'>): Promise<McpSession> {
    const now = Date.now();
    const session: McpSession = { id: randomBytes(16).toString('hex'), logLevel: 'info', createdAt: new Date(now).toISOString(), ...fields };
    await this.run(() => this.redis.set(this.key(session.id, 'session'), JSON.stringify(session), 'EX', SESSION_TTL_S));
    const args = [session.id, now, SESSION_TTL_S, MAX_SESSIONS_PER_USER, TOUCH_EVERY_MS, SET_TTL_S].map(String);
    const ending = (await this.run(() => this.redis.eval(ADMIT, 1, this.userKey(session.userId), ...args))) as string[];
    await Promise.all(ending.map((id) => this.run(() => this.redis.del(...this.keys(id)))));
    this.touched.set(session.id, now);
    return session;
  }

  /**
   * Moves a session to the front of its user's set, at most once per TOUCH_EVERY_MS here (a
   * session opened before the set existed joins it so). One ended meanwhile on another replica
   * may come back as an id with no session: it counts until it is the least recently used.
   */
  private async touch(session: McpSession): Promise<void> {
    const now = Date.now();
    if (now - (this.touched.get(session.id) ?? 0) < TOUCH_EVERY_MS) return;
    if (this.touched.size >= 10_000) this.touched.clear();
    this.touched.set(session.id, now);
    await this.run(() => this.redis.eval(TOUCH, 1, this.userKey(session.userId), session.id, String(now), String(SET_TTL_S)));
  }

  /**
   * The user's session, its lifetime renewed, in one round trip (every request of a session comes
   * through here); another user's, an ended or unknown one → undefined. Naming another user's
   * session renews its lifetime too, and gives nothing else away.
   */
  async get(id: string, userId: string): Promise<McpSession | undefined> {
    if (!/^[0-9a-f]{32}$/.test(id)) return undefined;
    const raw = await this.run(() => this.redis.eval(GET_AND_RENEW, 4, ...this.keys(id), String(SESSION_TTL_S)));
    if (typeof raw !== 'string') return undefined;
    const session = JSON.parse(raw) as McpSession;
    if (session.userId !== userId) return undefined;
    await this.touch(session);
    return session;
  }

  async setLogLevel(session: McpSession, level: string): Promise<void> {
    await this.run(() => this.redis.set(this.key(session.id, 'session'), JSON.stringify({ ...session, logLevel: level }), 'EX', SESSION_TTL_S));
  }

  async end(session: McpSession): Promise<void> {
    // Different slots: two commands, sent together.
    await Promise.all([this.run(() => this.redis.del(...this.keys(session.id))), this.run(() => this.redis.zrem(this.userKey(session.userId), session.id))]);
    this.touched.delete(session.id);
  }

  /** False when the session holds MAX_SUBSCRIPTIONS others already. */
  async subscribe(id: string, path: string): Promise<boolean> {
    const done = await this.run(() => this.redis.eval(SUBSCRIBE, 1, this.key(id, 'subs'), path, String(MAX_SUBSCRIPTIONS), String(SESSION_TTL_S)));
    return done === 1;
  }

  async unsubscribe(id: string, path: string): Promise<void> {
    await this.run(() => this.redis.srem(this.key(id, 'subs'), path));
  }

  async subscriptions(id: string): Promise<string[]> {
    return this.run(() => this.redis.smembers(this.key(id, 'subs')));
  }

  /**
   * The session's position in the changes feed (event-ids.ts: a cursor, or a place among the
   * changes after one) its GET stream continues from; set by the first subscription, then moved
   * only by the session's stream (advance).
   */
  async cursor(id: string): Promise<string | undefined> {
    return (await this.run(() => this.redis.get(this.key(id, 'cursor')))) ?? undefined;
  }

  async initCursor(id: string, cursor: string): Promise<void> {
    await this.run(() => this.redis.set(this.key(id, 'cursor'), cursor, 'EX', SESSION_TTL_S, 'NX'));
  }

  /**
   * Moves the position from `from` to `to` only while `owner` still holds the session's stream
   * and the position is still `from`: a stream replaced by a newer one (on any replica) stops
   * without delivering again what its successor delivers.
   */
  async advance(id: string, owner: string, from: string, to: string): Promise<boolean> {
    const done = await this.run(() =>
      this.redis.eval(
        ADVANCE,
        2,
        this.key(id, 'cursor'),
        this.key(id, 'stream'),
        owner,
        from,
        to,
        String(SESSION_TTL_S),
      ),
    );
    return done === 1;
  }

  /** Makes `owner` the session's one stream (the newest GET wins); the one it replaces stops. */
  async claimStream(id: string, owner: string): Promise<void> {
    await this.run(() => this.redis.set(this.key(id, 'stream'), owner, 'EX', SESSION_TTL_S));
  }

  async streamOwner(id: string): Promise<string | undefined> {
    return (await this.run(() => this.redis.get(this.key(id, 'stream')))) ?? undefined;
  }

  async releaseStream(id: string, owner: string): Promise<void> {
    await this.run(() => this.redis.eval(RELEASE_STREAM, 1, this.key(id, 'stream'), owner));
  }

  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw errors.unavailable('the session store', err);
    }
  }
}
