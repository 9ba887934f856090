/**
 * COMMIT_CONFIG — makes a new config current in one atomic step: the compare-and-set on the
 * current config, retention, the Agent's `q` index entry and the outbox, all under the user's
 * hash tag (one Cluster slot). Retention is decided by the caller (the domain's rule, over the
 * config set and pins it read just before); the script only checks that the decision still
 * holds: every config it deletes is unpinned now (a chat or an alias may have pinned it since).
 *
 * KEYS: 1 Agent hash, 2 config set, 3 pins hash, 4 the new config, 5 the user's outbox list,
 *       6 the set of indexed Agent ids, then the trigram sets: nNew the Agent joins, nKeep it
 *       stays in, nDrop it leaves; then the nExpired configs to delete.
 * ARGV: 1 base config id, 2 new config id, 3 config JSON, 4 Agent id, 5 nHash, 6 nNew,
 *       7 nKeep, 8 nDrop, 9 nExpired, then nHash hash field/value items, the nExpired config
 *       ids, and the outbox entries.
 *
 * → {'gone'} | {'stale', current config id} | {'retry'} (an expired config is pinned now:
 * nothing written) | {'committed', HGETALL of the Agent hash after the write}.
 *
 * The index: an Agent already indexed joins its new trigrams and leaves those it lost; one not
 * indexed yet (written before the index existed) joins all its trigrams and becomes indexed.
 */
export const COMMIT_CONFIG = `
local current = redis.call('HGET', KEYS[1], 'currentConfigId')
if not current then return {'gone'} end
if current ~= ARGV[1] then return {'stale', current} end
local nHash, nNew, nKeep, nDrop, nExp = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local e0 = 9 + nHash
for i = e0 + 1, e0 + nExp do
  if tonumber(redis.call('HGET', KEYS[3], ARGV[i]) or '0') > 0 then return {'retry'} end
end
local seq = tonumber(redis.call('HGET', KEYS[1], 'configSeq') or redis.call('ZCARD', KEYS[2])) + 1
redis.call('SET', KEYS[4], ARGV[3])
redis.call('ZADD', KEYS[2], seq, ARGV[2])
redis.call('HSET', KEYS[1], 'configSeq', seq, unpack(ARGV, 10, e0))
if nExp > 0 then
  local k0 = 6 + nNew + nKeep + nDrop
  redis.call('DEL', unpack(KEYS, k0 + 1, k0 + nExp))
  redis.call('ZREM', KEYS[2], unpack(ARGV, e0 + 1, e0 + nExp))
end
if #ARGV > e0 + nExp then redis.call('RPUSH', KEYS[5], unpack(ARGV, e0 + nExp + 1, #ARGV)) end
local id = ARGV[4]
if redis.call('SISMEMBER', KEYS[6], id) == 1 then
  for i = 7, 6 + nNew do redis.call('SADD', KEYS[i], id) end
  for i = 7 + nNew + nKeep, 6 + nNew + nKeep + nDrop do redis.call('SREM', KEYS[i], id) end
else
  for i = 7, 6 + nNew + nKeep do redis.call('SADD', KEYS[i], id) end
  redis.call('SADD', KEYS[6], id)
end
return {'committed', redis.call('HGETALL', KEYS[1])}`;
