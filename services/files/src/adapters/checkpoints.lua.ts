/**
 * The Lua of checkpoints, rewind and fork (docs/api/files.md#checkpoints, #rewind, #fork), on the
 * index's prelude and key layout (see index.lua.ts). Their own keys, under the same prefix P:
 *
 *   P ckm        HASH   checkpoint id → its JSON {path, label, createdAt, files, bytes}
 *   P ckl        ZSET   checkpoint id → a sequence number (newest first = highest)
 *   P ckseq      STRING the last sequence number
 *   P ck:<id>    HASH   file path → its entry then ("size|mtimeMs|sha256|objectKey|revision"):
 *                       a revision trimmed from the path's history (FILE_REVISIONS,
 *                       FILE_REVISION_DAYS) can still be read and restored while a checkpoint
 *                       names it (revisionAt() looks here)
 *   P ckd:<id>   ZSET   the explicit folders (docs/api/files.md#folders) at or below the
 *                       checkpoint's path then, score 0 (lex ranges: those below a path); its JSON
 *                       says how many (`folders`). A checkpoint taken before checkpoints recorded
 *                       folders has no `folders` in its JSON: a rewind to it leaves the explicit
 *                       folders as they are, and a fork at it holds none
 *   P kr:<path>, P krn  what checkpoints taken by earlier versions kept per revision (revision →
 *                       entry, and "<path>\0<revision>" → how many checkpoints); no longer written,
 *                       cleared as those checkpoints are deleted
 *   P cko        HASH   object key → how many checkpoint entries reference it
 *   P ckb        STRING bytes of the objects in cko, each once (what checkpoints hold, for usage)
 *   P mvs        ZSET   "<path>\0<15-digit ms>" score 0: each time a file or folder was moved away
 *                       from <path> (lex ranges: "was it moved away between t1 and t2")
 *   P mvst       ZSET   the same members scored by the time (trimmed by the retention by age)
 *
 * Every entry of a checkpoint holds a reference to its object, so its bytes are never reclaimed
 * while the checkpoint exists, and count once toward the usage (P used counts objects, not
 * references).
 *
 * "What was at P at time T" comes from the histories (P h:<path>): the newest record pushed at or
 * before T; a deletion there, or a move away from the path (or a folder above it) after that record,
 * means no file then. The explicit folders of then come from the folder histories (P dh:<path> in
 * index.lua.ts): the folder at a path was there at T when its newest record that began at or
 * before T had not ended by T.
 */
import { luaScript } from '@workspace/platform';
import { PRELUDE } from './index.lua.js';

/** Helpers shared by the scripts below. ARGV[1..6] as every index script. */
const CK_PRELUDE = `${PRELUDE}
local CKM, CKL, KRN, CKO, CKB = P .. 'ckm', P .. 'ckl', P .. 'krn', P .. 'cko', P .. 'ckb'
local MVS = P .. 'mvs'
local function ckKey(id) return P .. 'ck:' .. id end
local function ckDirs(id) return P .. 'ckd:' .. id end
local function under(p, dir)
  return dir == ROOT or p == dir or p:sub(1, #dir + 1) == dir .. '/'
end

-- A checkpoint, a rewind or a fork is one script, bounded as every operation on a tree is
-- (bounded() in index.lua.ts): by the files and folders now, by the paths with a history for a
-- time, and by the tree it rebuilds.

-- The tree at or below path now: its files (path, entry, path, entry, …, flat: what HSET takes)
-- and its explicit folders (path itself included, in byte order); nil and the refusal when the
-- tree has more than MAX_TREE entries.
local function treeNow(path)
  local files, dirs = {}, {}
  if path ~= ROOT then
    local v = redis.call('HGET', E, path)
    if v then return { path, v }, dirs end
    if explicit(path) then dirs[1] = path end
  end
  local large = bounded(below(Z, path), path)
  if large then return nil, large end
  for _, m in ipairs(redis.call('ZRANGEBYLEX', Z, '[' .. path .. '/', '(' .. path .. '0')) do
    local i = find(m, '\\0', 1, true)
    if i then
      files[#files + 1] = sub(m, 1, i - 1)
      files[#files + 1] = sub(m, i + 1)
    elseif redis.call('ZSCORE', children(m), '') then
      dirs[#dirs + 1] = m
    end
  end
  return files, dirs
end

-- A checkpoint's entry holds its object (cko counts checkpoint entries per object; ckb the bytes
-- of those objects, each once) and a reference to it. The checkpoint's own hash keeps the
-- revision readable (revisionAt() in index.lua.ts looks there once the history dropped it).
-- holdMany() does it for a tree's entries (path, entry, path, entry, …): each entry parsed once,
-- and both counts taken in bulk (recount() in index.lua.ts).
-- → the bytes ckb grows by, and the bytes of the entries' distinct contents (by sha256).
local function holdMany(fields)
  local b, bytes, seen = batch(), 0, {}
  for i = 2, #fields, 2 do
    local size, sha, key = fields[i]:match('^([^|]*)|[^|]*|([^|]*)|([^|]*)|')
    local took = b.refs[key]
    if took then
      took.n = took.n + 1
    else
      b.refs[key] = { n = 1, size = size, sha = sha }
      b.keys[#b.keys + 1] = key
    end
    if not seen[sha] then
      seen[sha] = true
      bytes = bytes + tonumber(size)
    end
  end
  flushRefs(b)
  local held = 0
  recount(CKO, b.keys, function(key, count)
    local took = b.refs[key]
    if not count then held = held + tonumber(took.size) end
    return (count or 0) + took.n
  end)
  return held, bytes
end
-- The reverse of holdMany() for a checkpoint's entries (path, entry, path, entry, …): each entry
-- parsed once by its bars, its holds and references counted down in bulk (recount()); an object
-- no checkpoint holds any more leaves cko, and one nothing references goes through unref().
-- → the bytes ckb shrinks by.
local function unholdMany(fields)
  local counts, sizes, keys = {}, {}, {}
  for i = 2, #fields, 2 do
    local v = fields[i]
    local b1 = find(v, '|', 1, true)
    local b3 = find(v, '|', find(v, '|', b1 + 1, true) + 1, true)
    local key = sub(v, b3 + 1, find(v, '|', b3 + 1, true) - 1)
    local n = counts[key]
    if n then
      counts[key] = n + 1
    else
      counts[key], sizes[key] = 1, sub(v, 1, b1 - 1)
      keys[#keys + 1] = key
    end
  end
  local freed, unheld, released = 0, {}, {}
  recount(CKO, keys, function(key, count)
    local left = (count or 0) - counts[key]
    if left > 0 then return left end
    unheld[#unheld + 1] = key
    freed = freed + tonumber(sizes[key])
  end)
  bulk({ 'HDEL', CKO }, unheld)
  -- An object whose last reference goes is left at one, for unref() to take with its bookkeeping.
  recount(R, keys, function(key, count)
    local left = (count or 0) - counts[key]
    if left > 0 then return left end
    released[#released + 1] = key
    return 1
  end)
  for _, key in ipairs(released) do unref(key) end
  return freed
end
local function addHeld(bytes)
  if bytes ~= 0 and redis.call('INCRBY', CKB, bytes) <= 0 then redis.call('DEL', CKB) end
end

-- Takes a checkpoint of the tree at path (\`files\`, \`dirs\`: treeNow(path), when the caller has it):
-- its files' entries, and its explicit folders.
-- → its JSON, or nil and the refusal: {'CHECKPOINT_QUOTA', count, max} when there are max, or
-- treeNow()'s.
local function checkpoint(id, path, label, max, files, dirs)
  local count = redis.call('HLEN', CKM)
  if count >= max then return nil, { 'CHECKPOINT_QUOTA', tostring(count), tostring(max) } end
  if not files then
    files, dirs = treeNow(path)
    if not files then return nil, dirs end
  end
  local held, bytes = holdMany(files)
  bulk({ 'HSET', ckKey(id) }, files)
  addHeld(held)
  local scored = {}
  for _, d in ipairs(dirs) do
    scored[#scored + 1] = '0'
    scored[#scored + 1] = d
  end
  bulk({ 'ZADD', ckDirs(id) }, scored)
  local meta = cjson.encode({ path = path, label = label, createdAt = NOW, files = #files / 2, bytes = bytes, folders = #dirs })
  redis.call('HSET', CKM, id, meta)
  redis.call('ZADD', CKL, redis.call('INCR', P .. 'ckseq'), id)
  return meta
end

local function pad(t) return string.format('%015d', t) end
-- Whether a file or folder was moved away from p, or from a folder above it, after \`from\` and at
-- or before \`to\` (ms).
local function leftBetween(p, from, to)
  local a = p
  while a ~= ROOT do
    local lo, hi = '(' .. a .. '\\0' .. pad(from), '[' .. a .. '\\0' .. pad(to)
    if #redis.call('ZRANGEBYLEX', MVS, lo, hi, 'LIMIT', 0, 1) > 0 then return true end
    a = split(a)
  end
  return false
end

-- The entry of the file at p at time t, or nil; true as the second value when p's history no
-- longer reaches back to t (FILE_REVISIONS records were pushed since).
local function fileAt(p, t)
  local records = redis.call('LRANGE', history(p), 0, -1)
  for _, r in ipairs(records) do
    local rev, deleted, mtime, size, sha, key, at = recordOf(r)
    at = tonumber(at)
    if at <= t then
      if deleted == '1' or leftBetween(p, at, t) then return nil end
      return size .. '|' .. mtime .. '|' .. sha .. '|' .. key .. '|' .. rev
    end
  end
  if #records >= KEEP_REVS then return nil, true end
  return nil
end

-- The explicit folders at or below path at time t, in byte order (from the folder histories, P
-- dh:<path>: the newest record that began at or before t decides), or nil and a refusal: more
-- paths with a folder history than MAX_TREE, or {'HISTORY_EXPIRED', path} when a path's records
-- (KEEP_REVS of them) no longer reach back to t, as fileAt().
local function foldersAt(path, t)
  local large = bounded(below(DHX, path), path)
  if large then return nil, large end
  local paths = redis.call('ZRANGEBYLEX', DHX, '[' .. path .. '/', '(' .. path .. '0')
  if path ~= ROOT and redis.call('ZSCORE', DHX, path) then table.insert(paths, 1, path) end
  local out = {}
  for _, p in ipairs(paths) do
    local records = redis.call('LRANGE', dirHistory(p), 0, -1)
    local found = false
    for _, r in ipairs(records) do
      local bar = find(r, '|', 1, true)
      if tonumber(sub(r, 1, bar - 1)) <= t then
        local closed = tonumber(sub(r, bar + 1))
        if not closed or closed > t then out[#out + 1] = p end
        found = true
        break
      end
    end
    if not found and #records >= KEEP_REVS then return nil, { 'HISTORY_EXPIRED', p } end
  end
  return out
end

-- The tree at or below path as it was: at checkpoint id (mode 'ck') or at time t (mode 'at').
-- → a map path → entry of its files, and its explicit folders in byte order (false: not known,
-- a checkpoint of an earlier version), or nil and a refusal.
local function filesThen(path, mode, arg)
  local out = {}
  if mode == 'ck' then
    local meta = redis.call('HGET', CKM, arg)
    if not meta then return nil, { 'CHECKPOINT_NOT_FOUND', arg } end
    meta = cjson.decode(meta)
    local taken = meta.path
    if not under(path, taken) then return nil, { 'NOT_COVERED', taken } end
    local all = redis.call('HGETALL', ckKey(arg))
    -- The checkpoint's own tree needs no test per path.
    local whole = path == taken
    for i = 1, #all, 2 do
      if whole or under(all[i], path) then out[all[i]] = all[i + 1] end
    end
    local dirs = false
    if meta.folders then
      if whole then
        dirs = redis.call('ZRANGE', ckDirs(arg), 0, -1)
      else
        dirs = redis.call('ZRANGEBYLEX', ckDirs(arg), '[' .. path .. '/', '(' .. path .. '0')
        if redis.call('ZSCORE', ckDirs(arg), path) then table.insert(dirs, 1, path) end
      end
    end
    return out, dirs
  end
  local t = tonumber(arg)
  local large = bounded(below(HX, path), path)
  if large then return nil, large end
  local paths = redis.call('ZRANGEBYLEX', HX, '[' .. path .. '/', '(' .. path .. '0')
  if path ~= ROOT and redis.call('ZSCORE', HX, path) then paths[#paths + 1] = path end
  for _, p in ipairs(paths) do
    local v, lost = fileAt(p, t)
    if lost then return nil, { 'HISTORY_EXPIRED', p } end
    if v then out[p] = v end
  end
  local dirs, refused = foldersAt(path, t)
  if not dirs then return nil, refused end
  return out, dirs
end

-- A new entry with the content of entry v (its bytes, a reference more), written now.
local function again(v)
  local size, _, sha, key = entryOf(v)
  ref(key, size, sha)
  return size .. '|' .. NOWS .. '|' .. sha .. '|' .. key .. '|' .. nextRev()
end

-- Removes the folders at p when they hold no file (explicit ones, docs/api/files.md#folders,
-- created since a time when p was a file), so that the file of then can come back there.
-- → whether p is free now.
local function clearFolders(p)
  local lo, hi = '[' .. p .. '/', '(' .. p .. '0'
  local members = redis.call('ZRANGEBYLEX', Z, lo, hi)
  for _, m in ipairs(members) do
    local _, v = decode(m)
    if v then return false end
  end
  members[#members + 1] = p
  for _, d in ipairs(members) do
    if explicit(d) then dirGone(d) end
    redis.call('DEL', children(d))
  end
  redis.call('ZREMRANGEBYLEX', Z, lo, hi)
  detach(p, nil)
  return true
end

-- Makes the folder at d explicit (docs/api/files.md#folders), linking it (and its missing parents)
-- when it is not there; not where a file is, at d or above it.
local function markFolder(d)
  if explicit(d) or redis.call('HEXISTS', E, d) == 1 or fileAbove(d) then return end
  if not isdir(d) then attach(d, nil) end
  redis.call('ZADD', children(d), 0, '')
  dirMade(d)
end

-- Makes the explicit folder at d an ordinary one: it goes when it holds nothing (with the folders
-- above it that it leaves empty, as detach() does).
local function unmarkFolder(d)
  redis.call('ZREM', children(d), '')
  dirGone(d)
  if redis.call('EXISTS', children(d)) == 0 then detach(d, nil) end
end

-- Stores a file at a path that holds none (nothing in the way).
local function place(p, v)
  redis.call('HSET', E, p, v)
  attach(p, v)
  written(p, nil, v)
end
`;

/**
 * Takes a checkpoint, of the files and the explicit folders at or below the path: ARGV[9] id,
 * [10] path, [11] label, [12] the most checkpoints a user may have.
 * → {'OK', json} or {'FILE_NOT_FOUND', path} or {'CHECKPOINT_QUOTA', count, max} or
 * {'TREE_TOO_LARGE', path, limit}.
 */
export const CREATE_CHECKPOINT = luaScript(`${CK_PRELUDE}
local path = ARGV[10]
if path ~= ROOT and redis.call('HEXISTS', E, path) == 0 and not isdir(path) then return { 'FILE_NOT_FOUND', path } end
local meta, refused = checkpoint(ARGV[9], path, ARGV[11], tonumber(ARGV[12]))
if not meta then return refused end
return { 'OK', meta }
`);

/** Deletes a checkpoint, releasing what it held: ARGV[9] id. → {'OK'} or {'CHECKPOINT_NOT_FOUND', id}. */
export const DELETE_CHECKPOINT = luaScript(`${CK_PRELUDE}
local id = ARGV[9]
if redis.call('HEXISTS', CKM, id) == 0 then return { 'CHECKPOINT_NOT_FOUND', id } end
local all = redis.call('HGETALL', ckKey(id))
addHeld(-unholdMany(all))
-- Checkpoints taken before their hashes were the revisions' keepers also kept each revision in
-- P kr:<path>, counted in P krn: those go with the last checkpoint that named them.
if redis.call('EXISTS', KRN) == 1 then
  for i = 1, #all, 2 do
    local counted = all[i] .. '\\0' .. field(all[i + 1], 5)
    if redis.call('HINCRBY', KRN, counted, -1) <= 0 then
      redis.call('HDEL', KRN, counted)
      redis.call('HDEL', P .. 'kr:' .. all[i], field(all[i + 1], 5))
    end
  end
end
redis.call('DEL', ckKey(id), ckDirs(id))
redis.call('HDEL', CKM, id)
redis.call('ZREM', CKL, id)
return { 'OK' }
`);

/**
 * Rewinds the tree at a path, in one step: ARGV[9] path, [10] 'ck'|'at', [11] checkpoint id or time
 * (ms), [12] the id of the checkpoint taken just before, [13] its label, [14] the most
 * checkpoints, [15] event template, [16] user id, [17] \`to\` as the caller gave it. The files and
 * the explicit folders (docs/api/files.md#folders) become those of then: files of then come back,
 * files made since go to the trash, folders of then are there again (explicit), explicit folders
 * made since are not (they go when they hold nothing then). Every check comes before the first
 * write, so a refusal changes nothing: the tree now and the tree of then (its files and folders;
 * and for a time the paths with a history, and those with a folder history) each at most
 * MAX_TREE_ENTRIES entries (bounded()), the files and folders that come back within MAX_FILES
 * (room()), the checkpoint within the most checkpoints.
 * → {'OK', restored, removed, unchanged} (files) or a refusal.
 */
export const REWIND = luaScript(`${CK_PRELUDE}
local path, mode = ARGV[9], ARGV[10]
if path ~= ROOT then
  local above = fileAbove(path)
  if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
end
local wanted, thenDirs = filesThen(path, mode, ARGV[11])
if not wanted then return thenDirs end
local now, nowDirs = treeNow(path)
if not now then return nowDirs end
-- A folder made before folder histories were kept has none: as far as the index knows, it was
-- there at any time, and stays.
if mode == 'at' then
  local known, legacy = {}, false
  for _, d in ipairs(thenDirs) do known[d] = true end
  for _, d in ipairs(nowDirs) do
    if not known[d] and redis.call('EXISTS', dirHistory(d)) == 0 then
      thenDirs[#thenDirs + 1] = d
      legacy = true
    end
  end
  if legacy then table.sort(thenDirs) end
end
-- The tree of then is bounded as the tree now is.
local thenPaths = {}
for p in pairs(wanted) do thenPaths[#thenPaths + 1] = p end
local refused = bounded(treeSize(thenPaths, path, thenDirs or nil), path)
if refused then return refused end
-- The files of then missing now come back: the entries they add (less the trash paths they take
-- back), the folders they need and the folders of then missing now must fit MAX_FILES. Files sent
-- to the trash move from one set to the other, and replaced ones stay; what goes (folders made
-- since) is not counted off.
local present, missing, adds = {}, {}, 0
for i = 1, #now, 2 do present[now[i]] = true end
for _, p in ipairs(thenPaths) do
  if not present[p] then
    missing[#missing + 1] = p
    adds = adds + 1 - inTrash(p)
  end
end
refused = room(adds + newFolders(missing, thenDirs or nil))
if refused then return refused end
local meta
meta, refused = checkpoint(ARGV[12], path, ARGV[13], tonumber(ARGV[14]), now, nowDirs)
if not meta then return refused end
local restored, removed, unchanged = 0, 0, 0
for i = 1, #now, 2 do
  local p, v = now[i], now[i + 1]
  local want = wanted[p]
  -- The same entry (a file not changed since the checkpoint) or the same bytes.
  if want and (want == v or field(want, 3) == field(v, 3)) then
    unchanged = unchanged + 1
  elseif want then
    local nv = again(want)
    unref(field(v, 4))
    written(p, v, nv)
    replace(p, v, nv)
    restored = restored + 1
  else
    redis.call('HDEL', E, p)
    detach(p, v)
    trashed(p, v)
    removed = removed + 1
  end
  wanted[p] = nil
end
-- The explicit folders made since stop being explicit, the deepest first, so that one left holding
-- nothing goes (and the folders above it that it leaves empty).
local keep = {}
for _, d in ipairs(thenDirs or nowDirs) do keep[d] = true end
for i = #nowDirs, 1, -1 do
  if not keep[nowDirs[i]] then unmarkFolder(nowDirs[i]) end
end
-- What is left was missing: back at its path (parents first, in byte order). The files that
-- were not there then are gone by now, so a directory in the way holds only folders made since.
table.sort(missing)
for _, p in ipairs(missing) do
  if (not isdir(p) or clearFolders(p)) and not fileAbove(p) then
    place(p, again(wanted[p]))
    restored = restored + 1
  end
end
-- The explicit folders of then, parents first.
for _, d in ipairs(thenDirs or {}) do markFolder(d) end
log('rewound', 'directory', path)
emit(ARGV[15], 'file.rewound', path, { userId = ARGV[16], path = path, to = ARGV[17], checkpointId = ARGV[12], restored = restored, removed = removed, unchanged = unchanged })
return { 'OK', restored, removed, unchanged }
`);

/**
 * Copies a tree as it was (a fork): ARGV[9] from, [10] to, [11] mode, [12] the uuid path, [13]
 * 'ck'|'at', [14] checkpoint id or time (ms), [15] event template, [16] user id, [17] If-Match on
 * the file at \`from\` now and [18] on the file \`to\` replaces (sha256s, '' for none). The rules of
 * a copy (index.lua.ts MOVE) hold, its conditions included, and its bounds: what it creates (the
 * files of then and their folders, and the explicit folders of then, explicit at \`to\`) at most
 * MAX_TREE_ENTRIES entries (bounded()), within MAX_FILES (room()); and every path it makes at most
 * MAX_PATH_BYTES (parsePath's bound: \`to\` is one, but \`to\` and a deep path below \`from\` together
 * may pass it) → {'INVALID_PATH', to, why}.
 * → {'OK', to, kind} or a refusal.
 */
export const FORK = luaScript(`${CK_PRELUDE}
local from, to, mode = ARGV[9], ARGV[10], ARGV[11]
local failed = precondition(from, ARGV[17]) or precondition(to, ARGV[18])
if failed then return failed end
if ARGV[18] ~= '' then mode = 'overwrite' end
local wanted, dirs = filesThen(from, ARGV[13], ARGV[14])
if not wanted then return dirs end
local src = wanted[from]
-- A file of then has no folders below it; a checkpoint of an earlier version knows none.
if src or not dirs then dirs = {} end
if not src and next(wanted) == nil and #dirs == 0 then return { 'FILE_NOT_FOUND', from } end
local placed, dst = destination(src, to, mode, ARGV[12])
if not placed then return dst end
to = placed
local kind = src and 'file' or 'directory'
-- The bound (what the fork creates), the paths it makes and the entries it adds, before the
-- first write.
local paths, targets, rels, dirTargets = {}, {}, {}, {}
local adds
if src then
  adds = dst and 0 or linking(to) - inTrash(to)
else
  for p in pairs(wanted) do paths[#paths + 1] = p end
  local large = bounded(treeSize(paths, from, dirs), from)
  if large then return large end
  local longest = 0
  for _, p in ipairs(paths) do longest = math.max(longest, #p) end
  for _, d in ipairs(dirs) do longest = math.max(longest, #d) end
  if #to + longest - #from > MAX_PATH then
    return { 'INVALID_PATH', to, 'a path of the fork would be longer than ' .. MAX_PATH .. ' UTF-8 bytes' }
  end
  table.sort(paths)
  local cut = #from + 1
  for i, p in ipairs(paths) do
    rels[i] = p:sub(cut)
    targets[i] = to .. rels[i]
  end
  for i, d in ipairs(dirs) do dirTargets[i] = to .. d:sub(cut) end
  adds = #paths - trashedAmong(to, rels) + newFolders(targets, dirTargets)
end
local full = room(adds)
if full then return full end
local v = nil
if src then
  v = again(src)
  if dst then
    unref(field(dst, 4))
    written(to, dst, v)
    replace(to, dst, v)
  else
    place(to, v)
  end
else
  for i, p in ipairs(paths) do place(targets[i], again(wanted[p])) end
  -- The explicit folders of then, parents first (dirs is in byte order).
  for _, d in ipairs(dirTargets) do markFolder(d) end
end
log('created', kind, to, nil, v)
local data = { userId = ARGV[16], path = to, kind = kind }
if v then data.size = tonumber(field(v, 1)); data.sha256 = field(v, 3) end
emit(ARGV[15], 'file.created', to, data)
return { 'OK', to, kind }
`);
