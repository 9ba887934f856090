/**
 * The delivery queue's scripts. KEYS are always due, jobs, claims (then done keys); every key
 * shares the `{deliveries}` tag.
 */
import { luaScript } from '@workspace/platform';

/** ARGV: dueAt, then id, json pairs; KEYS[4..]: the done key of each id in order. Returns how many were added. */
export const ENQUEUE = luaScript(`
local added = 0
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('EXISTS', KEYS[3 + i / 2]) == 0 and redis.call('HEXISTS', KEYS[2], id) == 0 then
    redis.call('HSET', KEYS[2], id, ARGV[i + 1])
    redis.call('ZADD', KEYS[1], ARGV[1], id)
    added = added + 1
  end
end
return added`);

/**
 * ARGV: now, leaseMs, limit, token prefix. Takes due deliveries, moves each to the lease's end,
 * records the claim's token. Returns id, token, json triples.
 */
export const CLAIM = luaScript(`
local now = tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for i, id in ipairs(ids) do
  local job = redis.call('HGET', KEYS[2], id)
  if job then
    local token = ARGV[4] .. ':' .. i
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
    redis.call('HSET', KEYS[3], id, token)
    table.insert(out, id)
    table.insert(out, token)
    table.insert(out, job)
  else
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
return out`);

/** ARGV: id, token, json, dueAt. Puts a claimed delivery back (if the claim still holds). */
export const RESCHEDULE = luaScript(`
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1`);

/** KEYS[4]: the done key. ARGV: id, token, done TTL (s). Removes a claimed delivery for good. */
export const COMPLETE = luaScript(`
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('SET', KEYS[4], '1', 'EX', tonumber(ARGV[3]))
return 1`);
