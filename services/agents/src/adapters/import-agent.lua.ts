import { luaScript } from '@workspace/platform';

/**
 * Writes an imported Agent in one step (docs/api/agents.md#import): every config, the aliases with
 * their pins and history, the Agent hash and index entry, and the outbox events, after the quota
 * and idempotency checks of CREATE_AGENT. Every key carries the user's hash tag (one Cluster slot).
 *
 * KEYS: 1 the user's Agent index, 2 the Agent hash, 3 its config set, 4 the outbox list,
 *       5 aliases hash, 6 alias history hash, 7 pins hash, 8 the idempotency key's record (or
 *       the Agent hash again when there is no key), 9… one key per config, oldest first.
 * ARGV: 1 MAX_AGENTS (0: none), 2 index member, 3 Agent id, 4 key TTL (ms), 5 Agent key prefix,
 *       6 '1' when KEYS[8] is an idempotency key, 7 n = hash items, 8 … 7+n the hash; then
 *       c = number of configs and c × (config id, config JSON); then a = number of aliases and a × (name,
 *       record JSON, history JSON, the config ids it pins separated by spaces); then the outbox entries.
 * → {2, agentId} (the key's earlier Agent), {0, used} (quota), or {1, used + 1}.
 */
export const IMPORT_AGENT = luaScript(`
if ARGV[6] == '1' then
  local earlier = redis.call('GET', KEYS[8])
  if earlier and redis.call('EXISTS', ARGV[5] .. earlier) == 1 then return {2, earlier} end
end
local used = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[1])
if max > 0 and used >= max then return {0, used} end
local i = 8
local n = tonumber(ARGV[7])
local hash = {}
for j = 1, n do hash[#hash + 1] = ARGV[i + j - 1] end
i = i + n
redis.call('HSET', KEYS[2], unpack(hash))
local c = tonumber(ARGV[i])
i = i + 1
for j = 1, c do
  redis.call('SET', KEYS[8 + j], ARGV[i + 1])
  redis.call('ZADD', KEYS[3], j, ARGV[i])
  i = i + 2
end
redis.call('HSET', KEYS[2], 'configSeq', tostring(c))
local a = tonumber(ARGV[i])
i = i + 1
for j = 1, a do
  redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[6], ARGV[i], ARGV[i + 2])
  for id in string.gmatch(ARGV[i + 3], '%S+') do redis.call('HINCRBY', KEYS[7], id, 1) end
  i = i + 4
end
redis.call('ZADD', KEYS[1], 0, ARGV[2])
if #ARGV >= i then
  local events = {}
  for j = i, #ARGV do events[#events + 1] = ARGV[j] end
  redis.call('RPUSH', KEYS[4], unpack(events))
end
if ARGV[6] == '1' then redis.call('SET', KEYS[8], ARGV[3], 'PX', ARGV[4]) end
return {1, used + 1}`);
