/**
 * The Lua of revisions, the trash, restores, permanent deletes, retention by age and usage
 * (docs/api/files.md#revisions, docs/api/usage.md#byte-quota), on the index's prelude and key
 * layout (see index.lua.ts): histories `P h:<path>`, `P hx`, `P ho`, the trash `P t`, usage `P sz`
 * / `P used`.
 */
import { luaScript } from '@workspace/platform';
import { PRELUDE } from './index.lua.js';

/**
 * The content of one revision of a path (read only): ARGV[9] path, [10] revision.
 * → its entry (size|mtime|sha256|key|revision), or false.
 */
export const REVISION = luaScript(`${PRELUDE}
return revisionAt(ARGV[9], ARGV[10]) or false
`, { readOnly: true });

/**
 * The trash at or below a path (read only): ARGV[9] path, [10] '1' for anywhere below it
 * (else directly in it). → path, its deletion record, path, record, … in byte order.
 */
export const TRASH = luaScript(`${PRELUDE}
local path, recursive = ARGV[9], ARGV[10] == '1'
local cut = #path + 2
local out = {}
for _, p in ipairs(redis.call('ZRANGEBYLEX', T, '[' .. path .. '/', '(' .. path .. '0')) do
  if recursive or not p:find('/', cut, true) then
    out[#out + 1] = p
    out[#out + 1] = redis.call('LINDEX', history(p), 0) or ''
  end
end
return out
`, { readOnly: true });

/**
 * Makes a revision's bytes the file at a path again, whether a file is there or it was deleted
 * (a new revision): ARGV[9] path, [10] revision, [11] event template, [12] user id, [13] If-Match
 * on the file at the path now (its sha256, '' for none). A file at a path that holds none must fit
 * MAX_FILES (room(): its path leaves the trash, its missing parents are added).
 * → {'OK', path, 'created'|'updated', entry} or {code, path, why} or {'QUOTA_EXCEEDED', used, limit, 'MAX_FILES'}.
 */
export const RESTORE = luaScript(`${PRELUDE}
local path = ARGV[9]
local content = revisionAt(path, ARGV[10])
if not content then return { 'REVISION_NOT_FOUND', ARGV[10] } end
local failed = precondition(path, ARGV[13])
if failed then return failed end
local above = fileAbove(path)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
local old = redis.call('HGET', E, path)
if not old and isdir(path) then return { 'PATH_CONFLICT', path, 'a directory exists at this path' } end
local full = room(old and 0 or fileAdds(path))
if full then return full end
local size, _, sha, key = entryOf(content)
local v = size .. '|' .. NOWS .. '|' .. sha .. '|' .. key .. '|' .. nextRev()
if old then unref(field(old, 4)) end
written(path, old, v)
store(path, old, v)
ref(key, size, sha)
local t = old and 'updated' or 'created'
log(t, 'file', path, nil, v)
emit(ARGV[11], 'file.' .. t, path, { userId = ARGV[12], path = path, kind = 'file', size = tonumber(size), sha256 = sha })
return { 'OK', path, t, v }
`);

/**
 * Restores every file in the trash at or below a path to its last content, in one step (the
 * undo of a recursive delete): ARGV[9] path, [10] event template, [11] user id. Refused whole
 * when the tree now blocks one of them (a directory at its path, a file above it). Two trashed
 * files can block each other (a file, and one that was below it when it was a folder): the
 * newer deletion wins and the other stays in the trash. One change and one event, for the
 * path (a directory unless the path itself was the file restored). ARGV[12]: If-Match on the
 * file at the path ('' for none). More than MAX_TREE_ENTRIES paths in the trash at or below the path
 * are refused (bounded()); each file restored leaves the trash, so what it adds against MAX_FILES
 * is the folders it needs (room()).
 * → {'OK', files restored, kind} or {code, path, why} or {'TREE_TOO_LARGE', path, limit} or
 * {'QUOTA_EXCEEDED', used, limit, 'MAX_FILES'}.
 */
export const RESTORE_TREE = luaScript(`${PRELUDE}
local path = ARGV[9]
local failed = precondition(path, ARGV[12])
if failed then return failed end
-- The trash at or below the path, as its listing counts it, is what the restore works on.
local large = bounded(below(T, path) + inTrash(path), path)
if large then return large end
local found = redis.call('ZRANGEBYLEX', T, '[' .. path .. '/', '(' .. path .. '0')
if redis.call('ZSCORE', T, path) then found[#found + 1] = path end
-- The trashed paths whose newest record is a deletion, in parallel lists (a table per path costs
-- more than its fields): the path, its folder, the deletion's time, and of the content it
-- carries the size, "sha256|key" (one run in an entry), the key, and "size|sha256|key" (one run in
-- a record), so that the new entry and record are each one concatenation. (The deletion holds a
-- reference to the object, so push() never needs its sha256.)
local n, paths, dirs, ats, sizes, shaKeys, keys, runs = 0, {}, {}, {}, {}, {}, {}, {}
local blocked = {}
-- A directory at a trashed path refuses the restore; a recursive delete's undo finds none (nothing
-- is left below the path) without asking for each path.
local dirsBelow = redis.call('ZLEXCOUNT', Z, '[' .. path .. '/', '(' .. path .. '0') > 0
local folderOf = folders()
for _, p in ipairs(found) do
  if (dirsBelow or p == path) and isdir(p) then return { 'PATH_CONFLICT', p, 'a directory exists at this path' } end
  local parent = folderOf(p)
  local above = blocked[parent]
  if above == nil then
    above = fileAbove(p) or false
    blocked[parent] = above
  end
  if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
  -- The record "revision|deleted|mtime|size|sha256|key|recordedAt|last" (recordOf()), by its bars.
  local r = redis.call('LINDEX', history(p), 0)
  local b1 = r and find(r, '|', 1, true)
  if b1 and byte(r, b1 + 1) == ONE then
    local b3 = find(r, '|', b1 + 3, true)
    local b4 = find(r, '|', b3 + 1, true)
    local b5 = find(r, '|', b4 + 1, true)
    local b6 = find(r, '|', b5 + 1, true)
    local b7 = find(r, '|', b6 + 1, true)
    n = n + 1
    paths[n], dirs[n], ats[n] = p, parent, tonumber(sub(r, b6 + 1, b7 - 1))
    sizes[n], shaKeys[n], keys[n], runs[n] = sub(r, b3 + 1, b4 - 1), sub(r, b4 + 1, b6 - 1), sub(r, b5 + 1, b6 - 1), sub(r, b3 + 1, b6 - 1)
  end
end
-- Newest deletion first, then by path. Paths come in byte order: one recursive delete (one time)
-- needs no sort.
local order = nil
for i = 2, n do
  if ats[i] > ats[i - 1] or (ats[i] == ats[i - 1] and paths[i] < paths[i - 1]) then
    order = {}
    for j = 1, n do order[j] = j end
    table.sort(order, function(a, b)
      if ats[a] ~= ats[b] then return ats[a] > ats[b] end
      return paths[a] < paths[b]
    end)
    break
  end
end
-- Nothing in the tree blocks them now, so only they can block each other: a path restored as a
-- file (taken) blocks everything below it, and a path with a restored file below it (under)
-- cannot be a file. Decided here, without a call to Redis.
local taken, under, clear = {}, {}, {}
local function free(p, parent)
  if under[p] then return false end
  -- clear[d]: no file taken at d or above it. It stays true: a file taken at or above d later
  -- would have a file below it (under), which free() refuses.
  if not clear[parent] then
    local a = parent
    while a ~= ROOT do
      if taken[a] then return false end
      a = split(a)
    end
    clear[parent] = true
  end
  taken[p] = true
  local a = parent
  while a ~= ROOT and not under[a] do
    under[a] = true
    a = split(a)
  end
  return true
end
-- Which come back, decided before the first write.
local chosen, picked = {}, {}
for k = 1, n do
  local i = order and order[k] or k
  if free(paths[i], dirs[i]) then
    picked[#picked + 1] = i
    chosen[#chosen + 1] = paths[i]
  end
end
if #picked == 0 then return { 'OK', 0, '' } end
-- Each file restored leaves the trash for the tree: what it adds is the folders it needs.
local full = room(newFolders(chosen))
if full then return full end
local restored, last = #picked, nil
local b, entries = batch(), {}
for _, i in ipairs(picked) do
  local p = paths[i]
  local rev = nextRev()
  last = sizes[i] .. '|' .. NOWS .. '|' .. shaKeys[i] .. '|' .. rev
  entries[#entries + 1] = p
  entries[#entries + 1] = last
  -- written(p, nil, last, b), with the fields at hand; the entry's reference counted with the record's.
  push(p, rev .. '|0|' .. NOWS .. '|' .. runs[i] .. '|' .. NOWS .. '|', b, keys[i], sizes[i], false, 1)
end
-- The restored paths leave the trash (as written() does). When every path found there was
-- restored (the undo of one recursive delete), in one range removal instead of one member at a time.
if restored == #found then
  redis.call('ZREMRANGEBYLEX', T, '[' .. path .. '/', '(' .. path .. '0')
  redis.call('ZREM', T, path)
else
  for i = 1, #entries, 2 do b.t[#b.t + 1] = entries[i] end
end
bulk({ 'HSET', E }, entries)
attachMany(entries)
flush(b)
local kind = redis.call('HEXISTS', E, path) == 1 and 'file' or 'directory'
local v = kind == 'file' and last or nil
log('created', kind, path, nil, v)
local data = { userId = ARGV[11], path = path, kind = kind }
if v then data.size = tonumber(field(v, 1)); data.sha256 = field(v, 3) end
emit(ARGV[10], 'file.created', path, data)
return { 'OK', restored, kind }
`);

/**
 * Deletes for good (docs/api/files.md#permanent-delete): the file at a path, or with recursive
 * everything at or below it — current files, the trash and every history, the folder histories
 * (P dh:<path>) too, so that no rewind or fork to a time brings a purged folder back — so their
 * bytes are unreachable at once and queued as garbage due now (the sweeper removes them at its next
 * round, whatever the grace). ARGV[9] path, [10] '1' for recursive, [11] event template, [12] user id,
 * [13] If-Match on the file at the path ('' for none). An explicit folder that is empty needs no
 * recursive (nor does a path with only folder histories at or below it, which holds no bytes). A
 * tree of more than MAX_TREE_ENTRIES entries below the path, or more paths with a history below it,
 * or with a folder history, is refused (bounded()).
 * → {'OK', 'file'|'directory'|'history', files removed} or {code, path} or {'TREE_TOO_LARGE', path, limit}.
 */
export const PURGE = luaScript(`${PRELUDE}
local path, recursive = ARGV[9], ARGV[10] == '1'
local failed = precondition(path, ARGV[13])
if failed then return failed end
local function purge(p)
  local h = history(p)
  for _, r in ipairs(redis.call('LRANGE', h, 0, -1)) do unref(field(r, 6), 0) end
  redis.call('DEL', h)
  redis.call('ZREM', HX, p)
  redis.call('ZREM', HO, p)
  redis.call('ZREM', T, p)
end
local old = redis.call('HGET', E, path)
if old then
  redis.call('HDEL', E, path)
  detach(path, old)
  unref(field(old, 4), 0)
  purge(path)
  log('deleted', 'file', path)
  emit(ARGV[11], 'file.deleted', path, { userId = ARGV[12], path = path, kind = 'file' })
  return { 'OK', 'file', 1 }
end
local lo, hi = '[' .. path .. '/', '(' .. path .. '0'
local dir = isdir(path)
local own = redis.call('EXISTS', history(path)) == 1
local histories = #redis.call('ZRANGEBYLEX', HX, lo, hi, 'LIMIT', 0, 1) > 0
-- The histories of explicit folders (P dh:<path>) at or below the path go too, so that no rewind
-- or fork to a time brings a folder purged back; they hold no bytes, so they alone never ask for
-- recursive.
local folders = redis.call('EXISTS', dirHistory(path)) == 1 or #redis.call('ZRANGEBYLEX', DHX, lo, hi, 'LIMIT', 0, 1) > 0
if not dir and not own and not histories and not folders then return { 'FILE_NOT_FOUND', path } end
if ((dir and not emptyDir(path)) or histories) and not recursive then return { 'DIRECTORY_NOT_EMPTY', path } end
-- Three sets are walked: the tree below the path, the paths with a history there (current
-- files, the trash, the paths files were moved away from), and those with a folder history; each
-- is bounded.
local large = bounded(below(Z, path), path) or bounded(below(HX, path), path) or bounded(below(DHX, path), path)
if large then return large end
if own then purge(path) end
if folders then
  local gone = redis.call('ZRANGEBYLEX', DHX, lo, hi)
  if redis.call('ZSCORE', DHX, path) then gone[#gone + 1] = path end
  for _, p in ipairs(gone) do redis.call('DEL', dirHistory(p)) end
  bulk({ 'ZREM', DHX }, gone)
  bulk({ 'ZREM', DHO }, gone)
end
local removed = 0
if dir then
  for _, m in ipairs(redis.call('ZRANGEBYLEX', Z, lo, hi)) do
    local p, v = decode(m)
    if v then
      redis.call('HDEL', E, p)
      unref(field(v, 4), 0)
      removed = removed + 1
    else
      redis.call('DEL', children(p))
    end
  end
  redis.call('ZREMRANGEBYLEX', Z, lo, hi)
  redis.call('DEL', children(path))
  detach(path, nil)
end
for _, p in ipairs(redis.call('ZRANGEBYLEX', HX, lo, hi)) do purge(p) end
if not dir then return { 'OK', 'history', 0 } end
log('deleted', 'directory', path)
emit(ARGV[11], 'file.deleted', path, { userId = ARGV[12], path = path, kind = 'directory' })
return { 'OK', 'directory', removed }
`, { allowOom: true });

/**
 * Retention by age (docs/api/files.md#retention, FILE_REVISION_DAYS): drops the records that
 * stopped being current before the cutoff, oldest first — a record stops being current when the
 * next one is pushed; the last record of a path that holds no file when it was pushed (a deletion),
 * or when its file or a folder above it moved away (P mv); the current file's never. A path left
 * without records leaves the trash. Then, with the paths left of the budget, the folder histories
 * (P dh:<path>, P dho): a record closed before the cutoff goes, the open one (a folder there now)
 * never does.
 * ARGV[9] cutoff (ms), [10] most paths to look at (files' and folders' together).
 * → {records of files dropped, the earliest path's score of either set ('' for none), 1 when paths
 * are left to look at}.
 */
export const RETAIN = luaScript(`${PRELUDE}
local cutoff, budget = tonumber(ARGV[9]), tonumber(ARGV[10])
-- Moves older than the cutoff no longer decide anything.
redis.call('ZREMRANGEBYSCORE', MV, '-inf', cutoff)
for _, m in ipairs(redis.call('ZRANGEBYSCORE', P .. 'mvst', '-inf', cutoff, 'LIMIT', 0, 10000)) do
  redis.call('ZREM', P .. 'mvs', m)
  redis.call('ZREM', P .. 'mvst', m)
end
-- When a file at p, or a folder above it, was last moved away (0: not since the cutoff).
local function movedAt(p)
  local at, a = 0, p
  while a ~= ROOT do
    at = math.max(at, tonumber(redis.call('ZSCORE', MV, a) or '0'))
    a = split(a)
  end
  return at
end
local paths = redis.call('ZRANGEBYSCORE', HO, '-inf', cutoff, 'LIMIT', 0, budget)
local dropped = 0
for _, p in ipairs(paths) do
  local h = history(p)
  local v = redis.call('HGET', E, p)
  local current = v and field(v, 5)
  local look = nil
  while true do
    local n = redis.call('LLEN', h)
    if n == 0 then break end
    local tail = redis.call('LINDEX', h, -1)
    local since
    if n >= 2 then
      since = tonumber(field(redis.call('LINDEX', h, -2), 7))
    elseif field(tail, 2) == '0' and field(tail, 1) == current then
      since = nil
    else
      since = tonumber(field(tail, 7))
      -- Content left behind by a move stopped being current at the move.
      if field(tail, 2) == '0' then since = math.max(since, movedAt(p)) end
    end
    -- The current file's record: look again in a retention period (it may have gone by then).
    if not since then look = NOW break end
    if since > cutoff then look = since break end
    redis.call('RPOP', h)
    unref(field(tail, 6))
    dropped = dropped + 1
  end
  if look then
    redis.call('ZADD', HO, look, p)
  else
    redis.call('ZREM', HX, p)
    redis.call('ZREM', HO, p)
    redis.call('ZREM', T, p)
  end
end
-- The folder histories (P dh:<path>) with what budget is left: a record closed before the cutoff
-- goes, oldest first; the open one (the folder there now) never does.
local looked = #paths
if looked < budget then
  local dirs = redis.call('ZRANGEBYSCORE', DHO, '-inf', cutoff, 'LIMIT', 0, budget - looked)
  looked = looked + #dirs
  for _, p in ipairs(dirs) do
    local h = dirHistory(p)
    local look = nil
    while true do
      local tail = redis.call('LINDEX', h, -1)
      if not tail then break end
      local closed = tonumber(sub(tail, find(tail, '|', 1, true) + 1))
      -- The folder there now: look again in a retention period.
      if not closed then look = NOW break end
      if closed > cutoff then look = closed break end
      redis.call('RPOP', h)
    end
    if look then
      redis.call('ZADD', DHO, look, p)
    else
      redis.call('ZREM', DHX, p)
      redis.call('ZREM', DHO, p)
    end
  end
end
local first = redis.call('ZRANGE', HO, 0, 0, 'WITHSCORES')[2]
local dirFirst = redis.call('ZRANGE', DHO, 0, 0, 'WITHSCORES')[2]
if dirFirst and (not first or tonumber(dirFirst) < tonumber(first)) then first = dirFirst end
return { dropped, first or '', looked == budget and 1 or 0 }
`);

/**
 * The user's usage (read only). → {files, bytes of every referenced object, each once, the entries
 * MAX_FILES counts (entries(): the tree's paths and the trash's)}.
 */
export const USAGE = luaScript(`${PRELUDE}
return { redis.call('HLEN', E), used(), entries() }
`, { readOnly: true });
