/**
 * Alias writes, each one atomic step under the user's hash tag. An alias counts as one pin of
 * its config in the pins hash that chats use, so retention (which reads the pins inside its
 * own transaction) never reclaims an aliased config; every write also bumps `aliasRev` on the
 * Agent hash, which every config commit WATCHes, so a commit that read the pins before the
 * alias moved is retried instead of deleting the config the alias now names.
 *
 * KEYS: 1 Agent hash, 2 config set, 3 aliases hash, 4 history hash, 5 pins hash.
 * A routed alias (docs/api/agents.md#rollout) counts as one pin of each config it routes to.
 */
import { luaScript } from '@workspace/platform';

/** Helpers shared by the scripts: the configs a record pins, and whether two routings are equal. */
const HELPERS = `
local function targets(r)
  if r.routing and r.routing ~= cjson.null then
    local out = {}
    for _, e in ipairs(r.routing) do out[#out + 1] = e.configId end
    return out
  end
  return {r.configId}
end
local function routed(x)
  if x and x ~= cjson.null then return x end
  return nil
end
local function same(a, b)
  a, b = routed(a), routed(b)
  if a == nil or b == nil then return a == b end
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i].configId ~= b[i].configId or a[i].weight ~= b[i].weight then return false end
  end
  return true
end
local function unpin(r, alias)
  for _, id in ipairs(targets(r)) do
    if redis.call('HINCRBY', KEYS[5], id, -1) <= 0 then redis.call('HDEL', KEYS[5], id) end
    redis.call('HDEL', KEYS[6], alias .. '|' .. id)
  end
end`;

/**
 * KEYS as above, plus 6 the alias stats hash (`<alias>|<configId>` → chats of the current period).
 * ARGV: 1 alias, 2 config id (the routing's primary when routed), 3 description, 4 If-Match config
 *       id ('' for none), 5 now, 6 MAX_ALIASES_PER_AGENT (0: none), 7 agent id, 8 history entries
 *       kept, 9 routing JSON ('' for a plain alias).
 * A PUT that changes the config or the routing (weights alone included) starts a new period: the
 * history gains an entry, the pins move, and the stats of the old period are dropped.
 * → {'created'|'moved', record JSON} | {'precondition', current or ''} | {'quota', used}
 *   | {'agent-gone'} | {'config-gone', config id}
 */
export const PUT_ALIAS = luaScript(`${HELPERS}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'agent-gone'} end
local raw = redis.call('HGET', KEYS[3], ARGV[1])
local rec = nil
if raw then rec = cjson.decode(raw) end
if ARGV[4] ~= '' then
  if not rec then return {'precondition', ''} end
  if rec.configId ~= ARGV[4] then return {'precondition', rec.configId} end
end
local routing = nil
if ARGV[9] ~= '' then routing = cjson.decode(ARGV[9]) end
local wanted = {configId = ARGV[2], routing = routing}
for _, id in ipairs(targets(wanted)) do
  if not redis.call('ZSCORE', KEYS[2], id) then return {'config-gone', id} end
end
local status = 'moved'
local changed = false
local past = {}
if not rec then
  local used = redis.call('HLEN', KEYS[3])
  local max = tonumber(ARGV[6])
  if max > 0 and used >= max then return {'quota', used} end
  status = 'created'
  rec = {alias = ARGV[1], agentId = ARGV[7], description = ARGV[3], createdAt = ARGV[5], updatedAt = ARGV[5]}
  changed = true
elseif rec.configId ~= ARGV[2] or not same(rec.routing, routing) then
  unpin(rec, ARGV[1])
  local old = redis.call('HGET', KEYS[4], ARGV[1])
  if old then past = cjson.decode(old) end
  rec.updatedAt = ARGV[5]
  changed = true
end
local history
if changed then
  for _, id in ipairs(targets(wanted)) do redis.call('HINCRBY', KEYS[5], id, 1) end
  rec.configId = ARGV[2]
  rec.routing = routing
  history = {{configId = ARGV[2], routing = routing, from = ARGV[5]}}
  for i = 1, math.min(#past, tonumber(ARGV[8]) - 1) do history[#history + 1] = past[i] end
end
if rec.description ~= ARGV[3] then
  rec.description = ARGV[3]
  rec.updatedAt = ARGV[5]
end
local out = cjson.encode(rec)
redis.call('HSET', KEYS[3], ARGV[1], out)
if history then redis.call('HSET', KEYS[4], ARGV[1], cjson.encode(history)) end
redis.call('HINCRBY', KEYS[1], 'aliasRev', 1)
return {status, out}`);

/** KEYS as PUT_ALIAS. ARGV: 1 alias. → 1 when it was deleted, 0 when there was none. */
export const DELETE_ALIAS = luaScript(`${HELPERS}
local raw = redis.call('HGET', KEYS[3], ARGV[1])
if not raw then return 0 end
unpin(cjson.decode(raw), ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'aliasRev', 1)
return 1`);
