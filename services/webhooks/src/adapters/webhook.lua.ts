/** Scripts over one user's webhook keys (one hash tag). */
import { luaScript } from '@workspace/platform';

/**
 * KEYS: webhook hash, the user's index. ARGV: id, createdAt (ms), max, then field, value pairs.
 * Returns {1, count} when stored, {0, count} at the quota (docs/api/usage.md#quotas: checked in
 * this step).
 */
export const CREATE = luaScript(`
local count = redis.call('ZCARD', KEYS[2])
if count >= tonumber(ARGV[3]) then return {0, count} end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return {1, count + 1}`);

/** KEYS: webhook hash. ARGV: field, value pairs ('' for failingSince clears it). Returns the hash, or nil when absent. */
export const UPDATE = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return redis.call('HGETALL', KEYS[1])`);

/**
 * KEYS: webhook hash, its log (a sorted set of entry JSON by time, so replicas' attempts that
 * end close together still list newest first). ARGV: entry JSON, ok (1/0), now (ms),
 * disableAfterMs, keep. Returns 'gone', 'disabled' (now, by this failure) or 'kept'.
 */
export const RECORD_ATTEMPT = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[5]) - 1)
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'failingSince', '')
  return 'kept'
end
local since = redis.call('HGET', KEYS[1], 'failingSince')
if not since or since == '' then
  redis.call('HSET', KEYS[1], 'failingSince', ARGV[3])
  return 'kept'
end
if tonumber(ARGV[3]) - tonumber(since) >= tonumber(ARGV[4]) and redis.call('HGET', KEYS[1], 'enabled') == '1' then
  redis.call('HSET', KEYS[1], 'enabled', '0')
  return 'disabled'
end
return 'kept'`);
