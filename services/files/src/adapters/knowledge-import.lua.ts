import { PRELUDE } from './index.lua.js';

/**
 * Pins staged uploads (CONTRACT §12 import) as an Agent's knowledge in one step: ARGV[7] agent
 * id, then (upload id, sha256, size) triples. Every upload must still be pending, else nothing
 * is pinned. An upload whose sha256 the Agent pins already is dropped (its bytes queued as garbage).
 * → {'OK'} | {'GONE', index (1-based)} | {'AGENT_REMOVED'}
 */
export const PIN_STAGED = `${PRELUDE}
local agent = ARGV[7]
if redis.call('SISMEMBER', P .. 'knx', agent) == 1 then return { 'AGENT_REMOVED' } end
local records = {}
for i = 8, #ARGV, 3 do
  local record = redis.call('HGET', P .. 'up', ARGV[i])
  if not record then return { 'GONE', tostring((i - 5) / 3) } end
  records[#records + 1] = cjson.decode(record)
end
for n, record in ipairs(records) do
  local i = 8 + (n - 1) * 3
  redis.call('HDEL', P .. 'up', ARGV[i])
  redis.call('ZREM', P .. 'upx', ARGV[i])
  if redis.call('HSETNX', P .. 'kn:' .. agent, ARGV[i + 1], record.key) == 1 then
    ref(record.key, ARGV[i + 2])
  else
    redis.call('ZADD', G, NOW, record.key)
  end
end
return { 'OK' }
`;
