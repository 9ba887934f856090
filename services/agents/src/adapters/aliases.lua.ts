/**
 * Alias writes, each one atomic step under the user's hash tag. An alias counts as one pin of
 * its config in the pins hash that chats use, so retention (which reads the pins inside its
 * own transaction) never reclaims an aliased config; every write also bumps `aliasRev` on the
 * Agent hash, which every config commit WATCHes, so a commit that read the pins before the
 * alias moved is retried instead of deleting the config the alias now names.
 *
 * KEYS: 1 Agent hash, 2 config set, 3 aliases hash, 4 history hash, 5 pins hash.
 */

/**
 * ARGV: 1 alias, 2 config id, 3 description, 4 If-Match config id ('' for none), 5 now,
 *       6 MAX_ALIASES_PER_AGENT (0: none), 7 agent id, 8 history entries kept.
 * → {'created'|'moved', record JSON} | {'precondition', current or ''} | {'quota', used}
 *   | {'agent-gone'} | {'config-gone'}
 */
export const PUT_ALIAS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'agent-gone'} end
local raw = redis.call('HGET', KEYS[3], ARGV[1])
local rec = nil
if raw then rec = cjson.decode(raw) end
if ARGV[4] ~= '' then
  if not rec then return {'precondition', ''} end
  if rec.configId ~= ARGV[4] then return {'precondition', rec.configId} end
end
if not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return {'config-gone'} end
local status = 'moved'
local history
if not rec then
  local used = redis.call('HLEN', KEYS[3])
  local max = tonumber(ARGV[6])
  if max > 0 and used >= max then return {'quota', used} end
  status = 'created'
  rec = {alias = ARGV[1], agentId = ARGV[7], configId = ARGV[2], description = ARGV[3], createdAt = ARGV[5], updatedAt = ARGV[5]}
  redis.call('HINCRBY', KEYS[5], ARGV[2], 1)
  history = {{configId = ARGV[2], from = ARGV[5]}}
else
  if rec.configId ~= ARGV[2] then
    redis.call('HINCRBY', KEYS[5], rec.configId, -1)
    redis.call('HINCRBY', KEYS[5], ARGV[2], 1)
    local old = redis.call('HGET', KEYS[4], ARGV[1])
    local past = old and cjson.decode(old) or {}
    history = {{configId = ARGV[2], from = ARGV[5]}}
    for i = 1, math.min(#past, tonumber(ARGV[8]) - 1) do history[#history + 1] = past[i] end
    rec.configId = ARGV[2]
    rec.updatedAt = ARGV[5]
  end
  if rec.description ~= ARGV[3] then
    rec.description = ARGV[3]
    rec.updatedAt = ARGV[5]
  end
end
local out = cjson.encode(rec)
redis.call('HSET', KEYS[3], ARGV[1], out)
if history then redis.call('HSET', KEYS[4], ARGV[1], cjson.encode(history)) end
redis.call('HINCRBY', KEYS[1], 'aliasRev', 1)
return {status, out}`;

/** ARGV: 1 alias. → 1 when it was deleted, 0 when there was none. */
export const DELETE_ALIAS = `
local raw = redis.call('HGET', KEYS[3], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if redis.call('HINCRBY', KEYS[5], rec.configId, -1) <= 0 then redis.call('HDEL', KEYS[5], rec.configId) end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'aliasRev', 1)
return 1`;
