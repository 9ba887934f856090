import { luaScript } from '@workspace/platform';

/**
 * The `q` index (see search-index.ts) in Lua, so that every change of it happens in the same
 * atomic step as the change of the Agent it reflects (EVAL inside the write's MULTI).
 *
 * INDEX_SYNC — makes the index hold one Agent's trigrams as its hash holds them now.
 * KEYS: 1 the Agent hash, 2 the set of indexed Agent ids, then `nAdd` trigram sets the Agent
 *       joins, and the sets it leaves.
 * ARGV: 1 Agent id, 2 nAdd, 3 mode, 4 searchName, 5 searchDescription.
 * mode `set` (the sets to join are all of the Agent's) and `diff` (those it did not hold
 * before): applied only when the hash holds exactly ARGV[4] and ARGV[5] (the text the
 * trigrams came from), else nothing changes and 0 is returned (a create that did not create,
 * or a backfill that lost a race with a write that indexes the Agent itself). `diff` on an
 * Agent not indexed changes nothing either: the search's coverage check sends it to the
 * backfill. mode `drop`: the Agent leaves every set named (its delete).
 */
export const INDEX_SYNC = luaScript(`
local id = ARGV[1]
if ARGV[3] == 'drop' then
  for i = 3, #KEYS do redis.call('SREM', KEYS[i], id) end
  redis.call('SREM', KEYS[2], id)
  return 1
end
local f = redis.call('HMGET', KEYS[1], 'searchName', 'searchDescription')
if f[1] ~= ARGV[4] or (f[2] or '') ~= ARGV[5] then return 0 end
if ARGV[3] == 'diff' and redis.call('SISMEMBER', KEYS[2], id) == 0 then return 0 end
local nAdd = tonumber(ARGV[2])
for i = 3, 2 + nAdd do redis.call('SADD', KEYS[i], id) end
for i = 3 + nAdd, #KEYS do redis.call('SREM', KEYS[i], id) end
redis.call('SADD', KEYS[2], id)
return 1`);

/**
 * SEARCH — the Agents matching `q`: `<createdAt>|<agentId>` of each, unordered; nil when the
 * index does not cover every Agent of the user (some were written before it existed).
 * KEYS: 1 the user's Agent list index, 2 the set of indexed Agent ids, then the trigram sets
 *       of q (none for a q of 1–2 characters: every Agent is a candidate).
 * ARGV: 1 q (normalized), 2 the Agent hash key prefix.
 * A candidate matches when its normalized name or description contains q (plain bytes: for
 * UTF-8 text that is the same as code points), as docs/api/agents.md#list-and-search says.
 */
export const SEARCH = luaScript(`
if redis.call('ZCARD', KEYS[1]) ~= redis.call('SCARD', KEYS[2]) then return false end
local q = ARGV[1]
local out = {}
local function check(id)
  local f = redis.call('HMGET', ARGV[2] .. id, 'searchName', 'searchDescription', 'createdAt')
  if f[1] and (string.find(f[1], q, 1, true) or (f[2] and string.find(f[2], q, 1, true))) then
    out[#out + 1] = f[3] .. '|' .. id
  end
end
if #KEYS > 2 then
  for _, id in ipairs(redis.call('SINTER', unpack(KEYS, 3))) do check(id) end
else
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do check(string.match(m, '[^|]*$')) end
end
return out`, { readOnly: true });

/**
 * PRUNE — drops from the set of indexed ids (KEYS[1]) those of ARGV[2..] whose hash (prefix
 * ARGV[1]) is gone. Their trigram entries stay behind: a search skips ids without a hash.
 */
export const PRUNE = luaScript(`
local n = 0
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 0 then n = n + redis.call('SREM', KEYS[1], ARGV[i]) end
end
return n`);
