import { luaScript } from '@workspace/platform';

/**
 * Creates an Agent in one step (every key carries the user's hash tag: one Cluster slot).
 *
 * KEYS: 1 the user's Agent index, 2 the Agent hash, 3 its first config, 4 its config set,
 *       5 the user's outbox list, [6 the idempotency key's record, when a key was sent].
 * ARGV: 1 MAX_AGENTS (0: no limit), 2 index member, 3 config id, 4 config JSON, 5 Agent id,
 *       6 key TTL (ms), 7 Agent key prefix, 8 n = number of hash field/value items,
 *       9 … 8+n the hash, then the outbox entries.
 *
 * Returns {2, agentId} when the key already made an Agent that still exists (nothing written),
 * {0, used} when the user has MAX_AGENTS already (nothing written), else {1, used + 1}.
 * The earlier Agent is looked up by a key built from ARGV[7]: it shares the slot of KEYS.
 */
export const CREATE_AGENT = luaScript(`
if #KEYS == 6 then
  local earlier = redis.call('GET', KEYS[6])
  if earlier and redis.call('EXISTS', ARGV[7] .. earlier) == 1 then return {2, earlier} end
end
local used = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[1])
if max > 0 and used >= max then return {0, used} end
local n = tonumber(ARGV[8])
local hash = {}
for i = 9, 8 + n do hash[#hash + 1] = ARGV[i] end
redis.call('HSET', KEYS[2], unpack(hash))
redis.call('SET', KEYS[3], ARGV[4])
redis.call('ZADD', KEYS[4], 1, ARGV[3])
redis.call('ZADD', KEYS[1], 0, ARGV[2])
if #ARGV > 8 + n then
  local events = {}
  for i = 9 + n, #ARGV do events[#events + 1] = ARGV[i] end
  redis.call('RPUSH', KEYS[5], unpack(events))
end
if #KEYS == 6 then redis.call('SET', KEYS[6], ARGV[5], 'PX', ARGV[6]) end
return {1, used + 1}`);
