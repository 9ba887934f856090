/**
 * The Lua of the metadata index (adapters/index.redis.ts). Every script works on one user's
 * keys, which share the user's hash tag, so each runs atomically on one Redis Cluster slot.
 *
 * Keys, under the prefix P = `{u:<tenant>}:fs:`:
 *   P e          HASH   file path → its entry, "size|mtimeMs|sha256|objectKey|revision"
 *   P z          ZSET   every path, score 0: a directory as its path, a file as "path\0entry",
 *                       so a byte-ordered recursive listing (or a page of it) is one native
 *                       ZRANGEBYLEX that carries the entries ("\0" sorts before any path byte)
 *   P c:<dir>    ZSET   what is directly in <dir>, the same way by name ("name", "name\0entry");
 *                       a directory exists while its set does
 *   P refs       HASH   object key → how many entries and pins reference it
 *   P gc         ZSET   object key → when nothing referenced it any more (the sweeper's work)
 *   P log        STREAM the user's changes (CONTRACT §10), trimmed to what must be kept
 *   P up / upx   HASH / ZSET   uploads in flight: id → record, id → expiry
 *   P kn:<agent> HASH   sha256 → object key: an Agent's pinned knowledge
 *   P knx        SET    Agents whose knowledge was removed (a late pin must not bring it back)
 *
 * Every script gets ARGV[1..4] = P, now (ms), changes to keep, ms of changes to keep; its own
 * arguments follow. KEYS[1] = P e (routes the call), KEYS[2] = the user's outbox list.
 */
const PRELUDE = `
local P = ARGV[1]
local NOW = tonumber(ARGV[2])
local KEEP_COUNT = tonumber(ARGV[3])
local KEEP_MS = tonumber(ARGV[4])
local E, Z, R, G, L = P .. 'e', P .. 'z', P .. 'refs', P .. 'gc', P .. 'log'
local ROOT = '/files'

local function split(p)
  return p:match('^(.*)/([^/]*)$')
end
local function children(p)
  return P .. 'c:' .. p
end
local function isdir(p)
  return p == ROOT or redis.call('EXISTS', children(p)) == 1
end
local function field(v, i)
  local parts = {}
  for s in (v .. '|'):gmatch('([^|]*)|') do parts[#parts + 1] = s end
  return parts[i]
end
local function withRev(v, mtime, rev)
  local size, _, sha, key = v:match('^([^|]*)|([^|]*)|([^|]*)|([^|]*)|')
  return size .. '|' .. (mtime or field(v, 2)) .. '|' .. sha .. '|' .. key .. '|' .. rev
end

-- The ancestor of p that is a file (a file may not sit below one), or nil. Walks up only until
-- an existing directory: above one, every ancestor is a directory.
local function fileAbove(p)
  local parent = split(p)
  local found = nil
  while parent ~= ROOT do
    if redis.call('EXISTS', children(parent)) == 1 then return found end
    if redis.call('HEXISTS', E, parent) == 1 then found = parent end
    parent = split(parent)
  end
  return found
end

-- A file's member in the sorted sets carries its entry; a directory's is its bare name.
local function member(p, v)
  if v then return p .. '\\0' .. v end
  return p
end
local function decode(m)
  local p, v = m:match('^(.-)%z(.*)$')
  if p then return p, v end
  return m, nil
end

-- Links a new entry (a file with its entry v, or a directory) into the tree: its parents'
-- child sets, creating directories as needed.
local function attach(p, v)
  redis.call('ZADD', Z, 0, member(p, v))
  local parent, name = split(p)
  local m = member(name, v)
  while true do
    local existed = parent == ROOT or redis.call('EXISTS', children(parent)) == 1
    redis.call('ZADD', children(parent), 0, m)
    if existed then return end
    redis.call('ZADD', Z, 0, parent)
    parent, m = split(parent)
  end
end

-- Unlinks an entry; directories left empty above it go with it.
local function detach(p, v)
  redis.call('ZREM', Z, member(p, v))
  local parent, name = split(p)
  local m = member(name, v)
  while true do
    redis.call('ZREM', children(parent), m)
    if parent == ROOT or redis.call('EXISTS', children(parent)) == 1 then return end
    redis.call('ZREM', Z, parent)
    parent, m = split(parent)
  end
end

-- Gives the file at p (linked with entry old) the entry v.
local function replace(p, old, v)
  local parent, name = split(p)
  redis.call('ZREM', Z, member(p, old))
  redis.call('ZADD', Z, 0, member(p, v))
  redis.call('ZREM', children(parent), member(name, old))
  redis.call('ZADD', children(parent), 0, member(name, v))
  redis.call('HSET', E, p, v)
end

-- Stores a file at p: replaces what is there (entry old) or links it anew.
local function store(p, old, v)
  if old then
    replace(p, old, v)
  else
    redis.call('HSET', E, p, v)
    attach(p, v)
  end
end

local function ref(key)
  redis.call('HINCRBY', R, key, 1)
  redis.call('ZREM', G, key)
end
local function unref(key)
  if redis.call('HINCRBY', R, key, -1) <= 0 then
    redis.call('HDEL', R, key)
    redis.call('ZADD', G, NOW, key)
  end
end

-- Appends a change; history older than KEEP_MS is trimmed, but never below KEEP_COUNT changes.
local function log(t, kind, path, from, v)
  local args = { 'XADD', L, '*', 't', t, 'k', kind, 'p', path, 'at', NOW }
  if from then args[#args + 1] = 'f'; args[#args + 1] = from end
  if v then
    args[#args + 1] = 's'; args[#args + 1] = field(v, 1)
    args[#args + 1] = 'h'; args[#args + 1] = field(v, 3)
  end
  redis.call(unpack(args))
  local excess = redis.call('XLEN', L) - KEEP_COUNT
  if excess > 0 then redis.call('XTRIM', L, 'MINID', '~', NOW - KEEP_MS, 'LIMIT', excess) end
end

-- Queues the event in the outbox, from the caller's template (id, time, source, trace).
local function emit(template, t, subject, data)
  local event = cjson.decode(template)
  event.type = t
  event.subject = subject
  event.data = data
  redis.call('RPUSH', KEYS[2], cjson.encode(event))
end
`;

/**
 * Commits a file (an upload, a written file): ARGV[5] path, [6] mode, [7] the uuid path to use
 * when the name is taken and mode is uuid, [8] the entry, [9] the upload id ('' for none),
 * [10] event template, [11] user id.
 * → {'OK', path, 'created'|'updated'} or {code, path, why}.
 */
export const COMMIT = `${PRELUDE}
local path, mode, v, upload = ARGV[5], ARGV[6], ARGV[8], ARGV[9]
if upload ~= '' and redis.call('HEXISTS', P .. 'up', upload) == 0 then return { 'UPLOAD_GONE', path } end
local above = fileAbove(path)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
local old = redis.call('HGET', E, path)
local dir = (not old) and isdir(path)
if old or dir then
  if mode == 'uuid' then
    if ARGV[7] == '' then return { 'INVALID_PATH', path, 'the name is too long to add a unique suffix' } end
    path, old = ARGV[7], nil
  elseif dir then
    return { 'PATH_CONFLICT', path, 'a directory exists at this path' }
  elseif mode == 'error' then
    return { 'FILE_EXISTS', path }
  end
end
if upload ~= '' then
  redis.call('HDEL', P .. 'up', upload)
  redis.call('ZREM', P .. 'upx', upload)
end
if old then unref(field(old, 4)) end
store(path, old, v)
ref(field(v, 4))
local t = old and 'updated' or 'created'
log(t, 'file', path, nil, v)
emit(ARGV[10], 'file.' .. t, path, { userId = ARGV[11], path = path, kind = 'file', size = tonumber(field(v, 1)), sha256 = field(v, 3) })
return { 'OK', path, t }
`;

/**
 * The checks of a commit without the commit (an upload refused before its bytes are sent):
 * ARGV[5] path, [6] mode. → {'OK', 'free'|'file'|'directory'} or {code, path, why}.
 */
export const PRECHECK = `${PRELUDE}
local path, mode = ARGV[5], ARGV[6]
local above = fileAbove(path)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
local file = redis.call('HEXISTS', E, path) == 1
local dir = (not file) and isdir(path)
if (file or dir) and mode ~= 'uuid' then
  if dir then return { 'PATH_CONFLICT', path, 'a directory exists at this path' } end
  if mode == 'error' then return { 'FILE_EXISTS', path } end
end
return { 'OK', file and 'file' or (dir and 'directory' or 'free') }
`;

/**
 * Deletes a file, or a directory with all below it: ARGV[5] path, [6] '1' for recursive,
 * [7] event template, [8] user id. → {'OK', kind, files removed} or {code, path}.
 */
export const DELETE = `${PRELUDE}
local path, recursive = ARGV[5], ARGV[6] == '1'
local old = redis.call('HGET', E, path)
if old then
  redis.call('HDEL', E, path)
  detach(path, old)
  unref(field(old, 4))
  log('deleted', 'file', path)
  emit(ARGV[7], 'file.deleted', path, { userId = ARGV[8], path = path, kind = 'file' })
  return { 'OK', 'file', 1 }
end
if not isdir(path) then return { 'FILE_NOT_FOUND', path } end
if not recursive then return { 'DIRECTORY_NOT_EMPTY', path } end
local lo, hi = '[' .. path .. '/', '(' .. path .. '0'
local removed = 0
for _, m in ipairs(redis.call('ZRANGEBYLEX', Z, lo, hi)) do
  local p, v = decode(m)
  if v then
    redis.call('HDEL', E, p)
    unref(field(v, 4))
    removed = removed + 1
  else
    redis.call('DEL', children(p))
  end
end
redis.call('ZREMRANGEBYLEX', Z, lo, hi)
redis.call('DEL', children(path))
detach(path, nil)
log('deleted', 'directory', path)
emit(ARGV[7], 'file.deleted', path, { userId = ARGV[8], path = path, kind = 'directory' })
return { 'OK', 'directory', removed }
`;

/**
 * Moves or copies a file or a directory: ARGV[5] from, [6] to, [7] mode, [8] the uuid path,
 * [9] 'move'|'copy', [10] event template, [11] user id, [12] revision id prefix (copies get
 * new revisions). The caller has checked that `to` is neither `from` nor below it.
 * → {'OK', to, kind} or {code, path, why}.
 */
export const MOVE = `${PRELUDE}
local from, to, mode, op, revs = ARGV[5], ARGV[6], ARGV[7], ARGV[9], ARGV[12]
local src = redis.call('HGET', E, from)
if not src and not isdir(from) then return { 'FILE_NOT_FOUND', from } end
local above = fileAbove(to)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
local dst = redis.call('HGET', E, to)
local dstDir = (not dst) and isdir(to)
if not src then
  if dst or dstDir then return { 'PATH_CONFLICT', to, 'the destination exists; a directory never merges or replaces' } end
elseif dstDir then
  return { 'PATH_CONFLICT', to, 'a directory exists at this path' }
elseif dst then
  if mode == 'error' then return { 'FILE_EXISTS', to } end
  if mode == 'uuid' then
    if ARGV[8] == '' then return { 'INVALID_PATH', to, 'the name is too long to add a unique suffix' } end
    to, dst = ARGV[8], nil
  end
end
local n = 0
local function nextRev()
  n = n + 1
  return revs .. string.format('%08x', n)
end
local kind = src and 'file' or 'directory'
if src then
  local v = op == 'copy' and withRev(src, NOW, nextRev()) or withRev(src, nil, nextRev())
  if op == 'move' then
    redis.call('HDEL', E, from)
    detach(from, src)
  else
    ref(field(src, 4))
  end
  if dst then unref(field(dst, 4)) end
  store(to, dst, v)
else
  local lo, hi = '[' .. from .. '/', '(' .. from .. '0'
  local cut = #from + 1
  local members = redis.call('ZRANGEBYLEX', Z, lo, hi)
  if op == 'move' then
    for _, m in ipairs(members) do
      local p, v = decode(m)
      local target = to .. p:sub(cut)
      if v then
        redis.call('HDEL', E, p)
        redis.call('HSET', E, target, v)
      else
        redis.call('RENAME', children(p), children(target))
      end
      redis.call('ZADD', Z, 0, member(target, v))
    end
    redis.call('ZREMRANGEBYLEX', Z, lo, hi)
    redis.call('RENAME', children(from), children(to))
    detach(from, nil)
  else
    -- Copies get new revisions, so their members differ: the child sets are built anew.
    for _, m in ipairs(members) do
      local p, v = decode(m)
      local target = to .. p:sub(cut)
      local parent, name = split(target)
      if v then
        ref(field(v, 4))
        v = withRev(v, NOW, nextRev())
        redis.call('HSET', E, target, v)
      end
      redis.call('ZADD', Z, 0, member(target, v))
      redis.call('ZADD', children(parent), 0, member(name, v))
    end
  end
  attach(to, nil)
end
local v = src and redis.call('HGET', E, to) or nil
if op == 'move' then
  log('moved', kind, to, from, v)
  emit(ARGV[10], 'file.moved', to, { userId = ARGV[11], from = from, path = to, kind = kind })
else
  log('created', kind, to, nil, v)
  local data = { userId = ARGV[11], path = to, kind = kind }
  if v then data.size = tonumber(field(v, 1)); data.sha256 = field(v, 3) end
  emit(ARGV[10], 'file.created', to, data)
end
return { 'OK', to, kind }
`;

/**
 * Files by path (read only): ARGV[5…] paths. → for each: the entry, 'D' for a directory, '' for
 * nothing.
 */
export const STAT = `${PRELUDE}
local out = {}
for i = 5, #ARGV do
  local v = redis.call('HGET', E, ARGV[i])
  out[#out + 1] = v or (isdir(ARGV[i]) and 'D' or '')
end
return out
`;

/**
 * Pins files as an Agent's knowledge: ARGV[5] agent id, [6…] paths. → {'OK', entry…} or
 * {code, index} (1-based) or {'AGENT_REMOVED'}.
 */
export const PIN = `${PRELUDE}
local agent = ARGV[5]
if redis.call('SISMEMBER', P .. 'knx', agent) == 1 then return { 'AGENT_REMOVED' } end
local out = { 'OK' }
for i = 6, #ARGV do
  local v = redis.call('HGET', E, ARGV[i])
  if not v then return { isdir(ARGV[i]) and 'IS_A_DIRECTORY' or 'FILE_NOT_FOUND', tostring(i - 5) } end
  out[#out + 1] = v
end
for i = 2, #out do
  local sha, key = field(out[i], 3), field(out[i], 4)
  if redis.call('HSETNX', P .. 'kn:' .. agent, sha, key) == 1 then ref(key) end
end
return out
`;

/** Removes an Agent's knowledge for good: ARGV[5] agent id. → how many pins went. */
export const UNPIN_AGENT = `${PRELUDE}
local agent = ARGV[5]
redis.call('SADD', P .. 'knx', agent)
local pins = redis.call('HGETALL', P .. 'kn:' .. agent)
for i = 2, #pins, 2 do unref(pins[i]) end
redis.call('DEL', P .. 'kn:' .. agent)
return #pins / 2
`;

/**
 * Imports one file of the old layout, unless its path is taken or blocked (idempotent):
 * ARGV[5] path, [6] entry. → 1 when imported.
 */
export const IMPORT = `${PRELUDE}
local path, v = ARGV[5], ARGV[6]
if redis.call('HEXISTS', E, path) == 1 or isdir(path) or fileAbove(path) then return 0 end
store(path, nil, v)
ref(field(v, 4))
return 1
`;

/** Imports one knowledge copy of the old layout: ARGV[5] agent id, [6] sha256, [7] object key. */
export const IMPORT_PIN = `${PRELUDE}
if redis.call('SISMEMBER', P .. 'knx', ARGV[5]) == 1 then return 0 end
if redis.call('HSETNX', P .. 'kn:' .. ARGV[5], ARGV[6], ARGV[7]) == 1 then ref(ARGV[7]) return 1 end
return 0
`;

/**
 * Claims an upload that will not be committed (abort, expiry): ARGV[5] upload id. Its object
 * is queued as garbage in the same step, so its bytes go with the sweep whatever happens next,
 * also bytes a late PUT or a late multipart completion writes within the grace period.
 * → its record, or false when another caller claimed it or it was committed.
 */
export const CLAIM_UPLOAD = `${PRELUDE}
local record = redis.call('HGET', P .. 'up', ARGV[5])
if not record then return false end
redis.call('HDEL', P .. 'up', ARGV[5])
redis.call('ZREM', P .. 'upx', ARGV[5])
redis.call('ZADD', G, NOW, cjson.decode(record).key)
return record
`;

/**
 * Claims unreferenced objects whose grace has passed: ARGV[5] cutoff (ms), [6] max count.
 * → the keys, each now the caller's alone to delete.
 */
export const CLAIM_GARBAGE = `${PRELUDE}
local keys = redis.call('ZRANGEBYSCORE', G, '-inf', ARGV[5], 'LIMIT', 0, tonumber(ARGV[6]))
local out = {}
for _, key in ipairs(keys) do
  redis.call('ZREM', G, key)
  if redis.call('HEXISTS', R, key) == 0 then out[#out + 1] = key end
end
return out
`;

/**
 * Keeps an upload pending (a later expiry, its record updated): ARGV[5] id, [6] record,
 * [7] expiry. → 1, or 0 when it is gone (expired and claimed, or committed).
 */
export const TOUCH_UPLOAD = `${PRELUDE}
if not redis.call('ZSCORE', P .. 'upx', ARGV[5]) then return 0 end
redis.call('ZADD', P .. 'upx', ARGV[7], ARGV[5])
redis.call('HSET', P .. 'up', ARGV[5], ARGV[6])
return 1
`;
