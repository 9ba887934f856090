import { luaScript } from '@workspace/platform';
import { PRELUDE } from './index.lua.js';

/**
 * Pins staged uploads (an Agent import's knowledge) in one step: ARGV[9] agent id, then
 * (upload id, sha256, size) triples. Every upload must still be pending and hold a reservation
 * of at least its size (made when it was staged, before its bytes were sent), else nothing is
 * pinned. The pin settles the reservation: the bytes count towards the usage instead, once per
 * distinct content, as a commit counts them (bytes the user has already are shared, and the
 * upload's own object goes with the sweep). An upload whose sha256 the Agent pins already is
 * dropped (its bytes queued as garbage).
 * → {'OK'} | {'GONE', index (1-based)} | {'UNRESERVED', index (1-based)} | {'AGENT_REMOVED'}
 */
export const PIN_STAGED = luaScript(`${PRELUDE}
local agent = ARGV[9]
if redis.call('SISMEMBER', P .. 'knx', agent) == 1 then return { 'AGENT_REMOVED' } end
local records = {}
for i = 10, #ARGV, 3 do
  local n = tostring((i - 7) / 3)
  local record = redis.call('HGET', P .. 'up', ARGV[i])
  if not record then return { 'GONE', n } end
  if reservedBy(ARGV[i]) < tonumber(ARGV[i + 2]) then return { 'UNRESERVED', n } end
  records[#records + 1] = cjson.decode(record)
end
for n, record in ipairs(records) do
  local i = 10 + (n - 1) * 3
  local sha, size = ARGV[i + 1], ARGV[i + 2]
  redis.call('HDEL', P .. 'up', ARGV[i])
  redis.call('ZREM', P .. 'upx', ARGV[i])
  release(ARGV[i])
  local key = record.key
  local same = redis.call('HGET', SK, sha)
  if same and redis.call('HGET', SZ, same) == size then
    redis.call('ZADD', G, NOWS, key)
    key = same
  end
  if redis.call('HSETNX', P .. 'kn:' .. agent, sha, key) == 1 then
    ref(key, size, sha)
  elseif key == record.key then
    redis.call('ZADD', G, NOWS, key)
  end
end
return { 'OK' }
`);
