import type { RedisClient } from './redis.js';
import { luaScript } from './lua.js';

/**
 * Tombstones that expire: a sorted set of members scored by when their tombstone ends (ms, by
 * Redis' clock, so replicas need not agree on time). They refuse late writes for something
 * deleted — an event of a deleted Agent arriving on another durable, a create that raced the
 * cascade — for a bounded window, and the set never holds more than one window's deletions.
 */

/** Lua: `tombstoned(key, member)` is true while `member`'s tombstone in `key` has not expired. Prepend to a script. */
export const TOMBSTONED_LUA = `
local function tombstoned(key, member)
  local expires = redis.call('ZSCORE', key, member)
  if not expires then return false end
  local t = redis.call('TIME')
  return tonumber(expires) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * Adds (or renews) `member`'s tombstone for `ttlMs`, trims the expired ones, and keeps the set
 * alive until its newest entry expires. KEYS: the set. ARGV: member, ttlMs.
 */
const TOMBSTONE = luaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`);

/** Idempotent: a repeat (a redelivered event) only renews the tombstone. */
export async function tombstone(redis: RedisClient, key: string, member: string, ttlMs: number): Promise<void> {
  await redis.eval(TOMBSTONE, 1, key, member, String(ttlMs));
}
