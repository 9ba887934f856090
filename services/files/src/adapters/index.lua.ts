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
 *                       a directory exists while its set does. A folder created explicitly
 *                       (docs/api/files.md#folders) holds the member "" (no name is empty) for as
 *                       long as it exists, so it stays when it is empty; listings skip it
 *   P refs       HASH   object key → how many entries, records and pins reference it
 *   P sz         HASH   object key → its bytes, while referenced
 *   P used       STRING bytes of every referenced object, each once (docs/api/usage.md#byte-quota)
 *   P ks / sk    HASH   object key → its sha256, and sha256 → a referenced object of those bytes:
 *                       an upload of bytes the user already has shares them (stored and counted once)
 *   P gc         ZSET   object key → when nothing referenced it any more (the sweeper's work)
 *   P tri        HASH   object key → the trigram summary of its bytes (docs/api/files.md#search),
 *                       kept while the object is referenced, dropped when its bytes are
 *   P log        STREAM the user's changes (docs/api/files.md#changes), trimmed to what must be kept
 *   P up / upx   HASH / ZSET   uploads in flight: id → record, id → expiry
 *   P rsv / rsvt HASH / STRING bytes reserved against the quota by uploads in flight (as
 *                       their bytes stream, before they reach the store): id → bytes, and the sum
 *   P kn:<agent> HASH   sha256 → object key: an Agent's pinned knowledge
 *   P knx        SET    Agents whose knowledge was removed (a late pin must not bring it back)
 *   P h:<path>   LIST   the path's history (docs/api/files.md#revisions), newest first, at most KEEP_REVS
 *                       records "revision|deleted|mtimeMs|size|sha256|objectKey|recordedAt|last":
 *                       every write onto the path (commit, overwrite, copy or move onto it,
 *                       restore) pushes its content; a delete pushes a deletion (deleted = 1,
 *                       recordedAt = when) that carries the last content (its fields, and its
 *                       revision as `last`), so a trashed file stays restorable on its own. The file at
 *                       a path, when there is one, is its newest record. The mime type follows
 *                       the path's name, so records do not carry it. Every record holds a
 *                       reference to its object.
 *   P hx         ZSET   every path with a history, score 0 (lex ranges: a folder's histories)
 *   P ho         ZSET   path → a time before which its oldest record cannot have stopped being
 *                       current: the retention by age (FILE_REVISION_DAYS, RETAIN) looks at a
 *                       path once its score is a retention period old
 *   P t          ZSET   the trash, score 0: paths whose newest record is a deletion and that
 *                       hold no file
 *   P mv         ZSET   path → when a file or a folder was last moved away from it: the records
 *                       left behind stop being current then (one entry per move, however many
 *                       files; the retention drops entries once they are a retention period old)
 *   P dh:<path>  LIST   the history of the explicit folder at the path (a marker "" in P c:<path>),
 *                       so that a rewind or a fork to a time knows which explicit folders were
 *                       there (checkpoints.lua.ts): newest first, at most KEEP_REVS records
 *                       "createdAt|deletedAt" (ms), one per span of time the folder was there.
 *                       Every script that adds the marker opens one ("createdAt|": create, the
 *                       copy or move of a folder onto the path, a rewind or a fork that makes it),
 *                       and every one that takes it away closes it (a delete, a move away, a
 *                       rewind); only the newest record is ever open, and it is while the folder
 *                       is there. A folder made before these histories existed has none until it
 *                       goes: then it gets one from 0 (dirGone()). Records hold no reference.
 *   P dhx        ZSET   every path with a folder history, score 0 (lex ranges: a tree's folders)
 *   P dho        ZSET   path → a time before which its oldest folder record cannot have been
 *                       closed: the retention by age looks at it once that is a retention period
 *                       old, and drops the records closed before the cutoff (never the open one)
 *
 * The scripts of revisions, the trash, restores, purges, retention and usage are in
 * revisions.lua.ts, on the same prelude.
 *
 * Every script gets ARGV[1..8] = P, now (ms), changes to keep, ms of changes to keep, records
 * to keep per path, a fresh revision id prefix (nextRev() appends a counter), the most entries
 * one operation on a tree touches (MAX_TREE_ENTRIES) and the most entries a user may have
 * (MAX_FILES); its own arguments follow, from ARGV[9]. KEYS[1] = P e (routes the call),
 * KEYS[2] = the user's outbox list.
 */
import { luaScript, MAX_PATH_BYTES } from '@workspace/platform';
export const PRELUDE = `
local P = ARGV[1]
local NOW = tonumber(ARGV[2])
-- NOW as Lua writes it into a string (once: formatting a number is a printf each time).
local NOWS = tostring(NOW)
local KEEP_COUNT = tonumber(ARGV[3])
local KEEP_MS = tonumber(ARGV[4])
local KEEP_REVS = tonumber(ARGV[5])
-- The bounds (docs/api/files.md#bounded-tree-work, docs/api/usage.md#entry-quota): see bounded() and room().
local MAX_TREE = tonumber(ARGV[7])
local MAX_FILES = tonumber(ARGV[8])
local E, Z, R, G, L = P .. 'e', P .. 'z', P .. 'refs', P .. 'gc', P .. 'log'
local SZ, U, KS, SK = P .. 'sz', P .. 'used', P .. 'ks', P .. 'sk'
local RSV, RSVT = P .. 'rsv', P .. 'rsvt'
local T, HX, HO, MV = P .. 't', P .. 'hx', P .. 'ho', P .. 'mv'
local DHX, DHO = P .. 'dhx', P .. 'dho'
local ROOT = '/files'
-- The longest path a tree operation may build (parsePath's MAX_PATH_BYTES, in UTF-8 bytes: Lua's #).
local MAX_PATH = ${MAX_PATH_BYTES}

local revCount, revHigh = 0, nil
local HEX = '0123456789abcdef'
local function nextRev()
  revCount = revCount + 1
  local low = revCount % 256
  -- The counter's high 6 digits change every 256 ids: a tree of files formats them once each.
  if low == 0 or not revHigh then revHigh = ARGV[6] .. string.format('%06x', (revCount - low) / 256) end
  local a, b = math.floor(low / 16) + 1, low % 16 + 1
  return revHigh .. HEX:sub(a, a) .. HEX:sub(b, b)
end

local function split(p)
  return p:match('^(.*)/([^/]*)$')
end
local function children(p)
  return P .. 'c:' .. p
end
local function isdir(p)
  return p == ROOT or redis.call('EXISTS', children(p)) == 1
end
-- A folder created explicitly (docs/api/files.md#folders): it holds the marker member "".
local function explicit(p)
  return p ~= ROOT and redis.call('ZSCORE', children(p), '') ~= false
end
-- An explicit folder that holds nothing (only its marker).
local function emptyDir(p)
  return explicit(p) and redis.call('ZCARD', children(p)) == 1
end

-- Runs one command with a fixed head (the command, its key, its flags) and many arguments, a
-- chunk at a time (Lua's unpack takes a few thousand values at most). The chunk is even, so
-- pairs (field and value, score and member) stay together. The head (the command and its key, and
-- at most one flag) goes before the chunk unpacked in place: no copy of the arguments per chunk.
local BULK_STEP = 1000
local function bulk(head, args)
  for i = 1, #args, BULK_STEP do
    local j = math.min(i + BULK_STEP - 1, #args)
    if head[3] then
      redis.call(head[1], head[2], head[3], unpack(args, i, j))
    else
      redis.call(head[1], head[2], unpack(args, i, j))
    end
  end
end

-- Field i (1-based) of an entry or a record ("a|b|c…"), or nil when it has fewer.
local function field(v, i)
  local start = 1
  for _ = 2, i do
    local bar = v:find('|', start, true)
    if not bar then return nil end
    start = bar + 1
  end
  local stop = v:find('|', start, true)
  return v:sub(start, stop and stop - 1 or -1)
end
-- Entry v with its bytes in object \`key\`.
local function withKey(v, key)
  local size, mtime, sha, _, rev = v:match('^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  return size .. '|' .. mtime .. '|' .. sha .. '|' .. key .. '|' .. rev
end
local function withRev(v, mtime, rev)
  if not mtime then return v:match('^(.*|)') .. rev end
  local size, _, sha, key = v:match('^([^|]*)|([^|]*)|([^|]*)|([^|]*)|')
  return size .. '|' .. mtime .. '|' .. sha .. '|' .. key .. '|' .. rev
end

-- A precondition on the file at p (docs/api/files.md#preconditions): want = '' none, '*' nothing
-- may be at p, else the sha256 the file at p must have. → nil when it holds, else the refusal
-- {'PRECONDITION_FAILED', the current sha256 ('' when no file is there: a directory or nothing)}.
local function precondition(p, want)
  if want == nil or want == '' then return nil end
  local v = redis.call('HGET', E, p)
  local sha = v and field(v, 3) or ''
  if want == '*' then
    if v or isdir(p) then return { 'PRECONDITION_FAILED', sha } end
    return nil
  end
  if sha ~= want then return { 'PRECONDITION_FAILED', sha } end
  return nil
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
  local i = m:find('\\0', 1, true)
  if i then return m:sub(1, i - 1), m:sub(i + 1) end
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

-- Lua's string functions as locals (s:find() looks find up in the string metatable each time).
-- Hot loops find bars and slashes with plain finds (memchr, in C) rather than patterns: Lua's
-- matcher costs a C call per character.
local find, sub, byte = string.find, string.sub, string.byte
-- Bytes compared with byte(): '/', and '1' (a record's deleted field).
local SLASH, ONE = 47, 49
-- The folder of each path of a run, computed only when it changes: paths in byte order come
-- grouped by folder. folderOf(p) → p's folder, and the index of the slash before p's name.
local function folders()
  local prev, n = nil, 0
  return function(p)
    if prev and byte(p, n + 1) == SLASH and find(p, prev, 1, true) == 1 and not find(p, '/', n + 2, true) then return prev, n + 1 end
    local slash = find(p, '/[^/]*$')
    prev, n = sub(p, 1, slash - 1), slash - 1
    return prev, slash
  end
end

-- Links many new files into the tree, as attach() does each but in a few bulk calls: \`files\`
-- is the flat list HSET takes (path, entry, path, entry…) of paths that hold nothing now, with
-- no file above them.
local function attachMany(files)
  local linked, kids, parents, known = {}, {}, {}, {}
  local function into(parent, m)
    local k = kids[parent]
    if not k then
      k = {}
      kids[parent] = k
      parents[#parents + 1] = parent
    end
    k[#k + 1] = '0'
    k[#k + 1] = m
  end
  -- Makes sure directory d is linked, and its parents up to the first that exists.
  local function link(d)
    while known[d] == nil do
      known[d] = true
      if d == ROOT or redis.call('EXISTS', children(d)) == 1 then return end
      linked[#linked + 1] = '0'
      linked[#linked + 1] = d
      local parent, name = split(d)
      into(parent, name)
      d = parent
    end
  end
  local folderOf = folders()
  for i = 1, #files, 2 do
    local p, v = files[i], files[i + 1]
    linked[#linked + 1] = '0'
    linked[#linked + 1] = p .. '\\0' .. v
    local parent, slash = folderOf(p)
    into(parent, sub(p, slash + 1) .. '\\0' .. v)
    link(parent)
  end
  bulk({ 'ZADD', Z }, linked)
  for _, parent in ipairs(parents) do bulk({ 'ZADD', children(parent) }, kids[parent]) end
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

-- A reference (or \`n\`) to an object of \`size\` bytes (their sha256: \`sha\`). Only an object nothing
-- referenced can be queued as garbage; its bytes count towards the user's usage once, however
-- many references it has, and it is the one later uploads of the same bytes share.
local function ref(key, size, sha, n)
  n = n or 1
  if redis.call('HINCRBY', R, key, n) == n then
    redis.call('ZREM', G, key)
    if size then
      redis.call('HSET', SZ, key, size)
      redis.call('INCRBY', U, size)
    end
    if sha then
      redis.call('HSET', KS, key, sha)
      redis.call('HSETNX', SK, sha, key)
    end
  end
end
-- An object nothing references any more is queued as garbage, due after the grace period
-- (at = NOW), or at once (at = 0) when it must go for good (a permanent delete).
local function unref(key, at)
  if redis.call('HINCRBY', R, key, -1) <= 0 then
    redis.call('HDEL', R, key)
    redis.call('ZADD', G, at or NOW, key)
    local size = redis.call('HGET', SZ, key)
    if size then
      redis.call('HDEL', SZ, key)
      redis.call('DECRBY', U, size)
    end
    local sha = redis.call('HGET', KS, key)
    if sha then
      redis.call('HDEL', KS, key)
      if redis.call('HGET', SK, sha) == key then redis.call('HDEL', SK, sha) end
    end
  end
end
-- The bytes the user's objects take, each once.
local function used()
  return tonumber(redis.call('GET', U) or '0')
end
-- The bytes uploads in flight have reserved, and what one of them holds.
local function reserved()
  return tonumber(redis.call('GET', RSVT) or '0')
end
local function reservedBy(upload)
  return tonumber(redis.call('HGET', RSV, upload) or '0')
end
-- Gives back what an upload reserved (it was committed, aborted or expired).
local function release(upload)
  local bytes = reservedBy(upload)
  if bytes > 0 then
    redis.call('HDEL', RSV, upload)
    if redis.call('DECRBY', RSVT, bytes) <= 0 then redis.call('DEL', RSVT) end
  end
end
-- Ends an upload's record (committed, aborted or expired): its reservation goes back, and the
-- objects that held a resumable upload's unfinished part (its two tail slots) go with the sweep.
-- → the record, or nil when it was gone.
local function forget(upload)
  local record = redis.call('HGET', P .. 'up', upload)
  if not record then return nil end
  redis.call('HDEL', P .. 'up', upload)
  redis.call('ZREM', P .. 'upx', upload)
  release(upload)
  local r = cjson.decode(record)
  if r.tail then redis.call('ZADD', G, NOWS, r.key .. '.t0', NOWS, r.key .. '.t1') end
  return record
end

-- Appends a change; history older than KEEP_MS is trimmed, but never below KEEP_COUNT changes.
local function log(t, kind, path, from, v)
  local args = { 'XADD', L, '*', 't', t, 'k', kind, 'p', path, 'at', NOWS }
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

local function history(p)
  return P .. 'h:' .. p
end
-- Notes that a file or folder left p now, for "what was at P at time T" (checkpoints.lua.ts).
local function movedAway(p)
  local m = p .. '\\0' .. string.format('%015d', NOW)
  redis.call('ZADD', P .. 'mvs', 0, m)
  redis.call('ZADD', P .. 'mvst', NOW, m)
end
-- The history of the explicit folder at p (P dh:<path> in the header): dirMade(p) when the marker
-- is added at p, where no explicit folder was, dirGone(p) when it is taken away.
local function dirHistory(p)
  return P .. 'dh:' .. p
end
local function dirPush(p, r)
  local h = dirHistory(p)
  local n = redis.call('LPUSH', h, r)
  if n == 1 then
    redis.call('ZADD', DHX, 0, p)
    redis.call('ZADD', DHO, 'NX', NOWS, p)
  elseif n > KEEP_REVS then
    redis.call('LTRIM', h, 0, KEEP_REVS - 1)
  end
end
local function dirMade(p)
  dirPush(p, NOWS .. '|')
end
local function dirGone(p)
  local h = dirHistory(p)
  local top = redis.call('LINDEX', h, 0)
  if top and sub(top, -1) == '|' then
    redis.call('LSET', h, 0, top .. NOWS)
  else
    -- No open record: a folder made before folder histories were kept (there since the start, as
    -- far as the index knows).
    dirPush(p, (top and sub(top, find(top, '|', 1, true) + 1) or '0') .. '|' .. NOWS)
  end
end

-- An entry's fields: size, mtime, sha256, key, revision.
local function entryOf(v)
  return v:match('^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
end
-- A record's fields: revision, deleted ('0'|'1'), mtime, size, sha256, key, recordedAt, last.
local function recordOf(r)
  return r:match('^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
end
local function contentRecord(v)
  local size, mtime, sha, key, rev = entryOf(v)
  return rev .. '|0|' .. mtime .. '|' .. size .. '|' .. sha .. '|' .. key .. '|' .. NOWS .. '|'
end

-- The work of many writes to histories that need not wait for each write: which paths have one,
-- since when, which left the trash, and the references the records take to their objects. push()
-- and written() gather it, flush() does it in a few calls: a tree of N files costs N list pushes
-- and a few bulk calls, not 5 N calls; files that share their bytes (copies) share one count.
local function batch()
  return { hx = {}, ho = {}, t = {}, trash = {}, refs = {}, keys = {}, dropped = {} }
end
-- Counts in hash h for many keys in two calls per BULK_STEP keys (HMGET, HSET) instead of one
-- HINCRBY each: count(key, its count now or nil) gives the key's new count, or nil to leave it.
local function recount(h, keys, count)
  for i = 1, #keys, BULK_STEP do
    local chunk = {}
    for j = i, math.min(i + BULK_STEP - 1, #keys) do chunk[#chunk + 1] = keys[j] end
    local counts = redis.call('HMGET', h, unpack(chunk))
    local set = { 'HSET', h }
    for j, key in ipairs(chunk) do
      local n = count(key, tonumber(counts[j]))
      if n then
        set[#set + 1] = key
        set[#set + 1] = n
      end
    end
    if #set > 2 then redis.call(unpack(set)) end
  end
end
-- The references a batch took, counted by recount(); an object nothing referenced yet gets
-- ref()'s bookkeeping. Then what the trimming released: after the references, so no object it
-- shares with them drops to zero.
local function flushRefs(b)
  recount(R, b.keys, function(key, count)
    local took = b.refs[key]
    if count then return count + took.n end
    ref(key, took.size, took.sha or field(took.r, 5), took.n)
  end)
  for _, key in ipairs(b.dropped) do unref(key) end
end
local function flush(b)
  flushRefs(b)
  bulk({ 'ZADD', HX }, b.hx)
  bulk({ 'ZADD', HO, 'NX' }, b.ho)
  bulk({ 'ZREM', T }, b.t)
  bulk({ 'ZADD', T }, b.trash)
end

-- Pushes a record onto p's history with a reference to its bytes; records beyond KEEP_REVS go,
-- releasing theirs. With a batch \`b\`, the rest of the work waits for flush(b). A caller that
-- has the record's object (key, size, sha256) at hand passes them, and the references it takes
-- to that object itself (\`also\`), so that one call counts them all. Without the sha256 (false), it
-- is read from the record only if the object was referenced by nothing yet (the only ones that
-- keep one): a caller whose object is referenced already need not make the string.
local function push(p, r, b, key, size, sha, also)
  local h = history(p)
  local n = redis.call('LPUSH', h, r)
  if n == 1 then
    if b then
      b.hx[#b.hx + 1] = '0'
      b.hx[#b.hx + 1] = p
      b.ho[#b.ho + 1] = NOWS
      b.ho[#b.ho + 1] = p
    else
      redis.call('ZADD', HX, 0, p)
      redis.call('ZADD', HO, 'NX', NOWS, p)
    end
  end
  if not key then
    local _
    _, _, _, size, sha, key = recordOf(r)
  end
  local refs = 1 + (also or 0)
  if refs ~= 0 then
    if b then
      local took = b.refs[key]
      if took then
        took.n = took.n + refs
      else
        b.refs[key] = { n = refs, size = size, sha = sha, r = (not sha) and r or nil }
        b.keys[#b.keys + 1] = key
      end
    else
      ref(key, size, sha or field(r, 5), refs)
    end
  end
  while n > KEEP_REVS do
    local released = field(redis.call('RPOP', h), 6)
    if b then b.dropped[#b.dropped + 1] = released else unref(released) end
    n = n - 1
  end
end

-- The file at p (entry v) as its history's newest record: files written before histories
-- existed get theirs at their first change.
local function adopt(p, v)
  local top = redis.call('LINDEX', history(p), 0)
  if not top or top:match('^([^|]*)|') ~= field(v, 5) then push(p, contentRecord(v)) end
end

-- Records a write of entry v at p (replacing old, if any): a revision, and p leaves the trash.
local function written(p, old, v, b)
  if old then adopt(p, old) end
  push(p, contentRecord(v), b)
  if b then b.t[#b.t + 1] = p else redis.call('ZREM', T, p) end
end

-- Records the deletion of the file at p (entry v, whose entry the caller removed): a deletion that
-- carries the last content, and takes over the entry's reference to it; p enters the trash.
local function trashed(p, v, b)
  adopt(p, v)
  local size, mtime, sha, key, rev = entryOf(v)
  push(p, nextRev() .. '|1|' .. mtime .. '|' .. size .. '|' .. sha .. '|' .. key .. '|' .. NOWS .. '|' .. rev, b, key, size, sha, -1)
  if b then
    b.trash[#b.trash + 1] = '0'
    b.trash[#b.trash + 1] = p
  else
    redis.call('ZADD', T, 0, p)
  end
end

-- The content of revision \`want\` of p as an entry (size|mtime|sha256|key|revision), or nil: a
-- content record, the last content a deletion carries, or the file there (written before
-- histories existed). A deletion's own revision has no content.
local function revisionAt(p, want)
  for _, r in ipairs(redis.call('LRANGE', history(p), 0, -1)) do
    local rev, deleted, mtime, size, sha, key, _, last = recordOf(r)
    if (deleted == '0' and rev == want) or (deleted == '1' and last == want) then
      return size .. '|' .. mtime .. '|' .. sha .. '|' .. key .. '|' .. want
    end
  end
  local v = redis.call('HGET', E, p)
  if v and field(v, 5) == want then return v end
  -- A revision a checkpoint names outlives the history's trimming (checkpoints.lua.ts): the
  -- checkpoints' own entries, and P kr:<path> of checkpoints taken before those were enough.
  for _, id in ipairs(redis.call('ZRANGE', P .. 'ckl', 0, -1)) do
    v = redis.call('HGET', P .. 'ck:' .. id, p)
    if v and field(v, 5) == want then return v end
  end
  return redis.call('HGET', P .. 'kr:' .. p, want) or nil
end

-- Where a move or copy of \`src\` (a file's entry; nil for a directory) lands at \`to\` under
-- \`mode\` (\`uuidTo\`: the unique name offered for mode uuid): the path and the file there it
-- replaces (nil for none), or nil and the refusal. A directory never merges or replaces.
local function destination(src, to, mode, uuidTo)
  local above = fileAbove(to)
  if above then return nil, { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
  local dst = redis.call('HGET', E, to)
  local dstDir = (not dst) and isdir(to)
  if not src then
    if dst or dstDir then return nil, { 'PATH_CONFLICT', to, 'the destination exists; a directory never merges or replaces' } end
  elseif dstDir then
    return nil, { 'PATH_CONFLICT', to, 'a directory exists at this path' }
  elseif dst then
    if mode == 'error' then return nil, { 'FILE_EXISTS', to } end
    if mode == 'uuid' then
      if uuidTo == '' then return nil, { 'INVALID_PATH', to, 'the name is too long to add a unique suffix' } end
      return uuidTo, nil
    end
  end
  return to, dst
end

-- Bounded tree work (docs/api/files.md#bounded-tree-work). A script is one step, and Redis serves
-- nobody else while it runs: an operation on a tree touches at most MAX_TREE entries, counted as a
-- listing counts them (files and folders below the path; a copy what it creates). below() counts
-- the members of a set below a path (O(log n)); bounded(n, p) → nil when an operation on the tree
-- at p may touch n entries, else the refusal {'TREE_TOO_LARGE', p, MAX_TREE}. Every script checks
-- before its first write, so a refusal changes nothing.
local function below(set, p)
  return redis.call('ZLEXCOUNT', set, '[' .. p .. '/', '(' .. p .. '0')
end
local function bounded(n, p)
  if n > MAX_TREE then return { 'TREE_TOO_LARGE', p, tostring(MAX_TREE) } end
  return nil
end

-- The entry quota (docs/api/usage.md#entry-quota): what MAX_FILES counts, every path of the tree
-- (files and folders: P z) and every path in the trash (P t), each once; copies too, though they
-- share bytes. room(n) → nil when a change that adds n entries fits (one that adds none always
-- does), else the refusal {'QUOTA_EXCEEDED', used, MAX_FILES, 'MAX_FILES'}. Every script that
-- adds entries asks in the step that adds them, before its first write, so concurrent changes
-- never pass it together. What a change adds is counted by the helpers below.
local function entries()
  return redis.call('ZCARD', Z) + redis.call('ZCARD', T)
end
local function room(n)
  if n <= 0 then return nil end
  local have = entries()
  if have + n > MAX_FILES then return { 'QUOTA_EXCEEDED', tostring(have), tostring(MAX_FILES), 'MAX_FILES' } end
  return nil
end
-- The paths linking p adds to the tree: p and its missing parents (0 when p is there).
local function linking(p)
  if redis.call('HEXISTS', E, p) == 1 or isdir(p) then return 0 end
  local n, parent = 1, split(p)
  while parent ~= ROOT and redis.call('EXISTS', children(parent)) == 0 do
    n = n + 1
    parent = split(parent)
  end
  return n
end
-- 1 when p is in the trash, which a file written at p leaves (written()), else 0.
local function inTrash(p)
  return redis.call('ZSCORE', T, p) and 1 or 0
end
-- What a file written at p adds (nothing when it replaces the file there).
local function fileAdds(p)
  local n = linking(p)
  if n == 0 then return 0 end
  return n - inTrash(p)
end
-- The paths unlinking p takes from the tree: p, and the folders above it that it leaves empty,
-- but not those above \`keep\` (a move's destination: linked again there, already counted).
local function unlinking(p, keep)
  local n, parent = 1, split(p)
  while parent ~= ROOT and redis.call('ZCARD', children(parent)) == 1 and keep:sub(1, #parent + 1) ~= parent .. '/' do
    n = n + 1
    parent = split(parent)
  end
  return n
end
-- The folders the files at \`paths\` need that are missing now, and the folders \`dirs\` (optional)
-- with theirs, each once (what linking them adds beside the files).
local function newFolders(paths, dirs)
  local known, n = {}, 0
  local function need(d)
    while d ~= ROOT and known[d] == nil do
      known[d] = redis.call('EXISTS', children(d)) == 1
      if known[d] then break end
      n = n + 1
      d = split(d)
    end
  end
  for _, p in ipairs(paths) do need((split(p))) end
  for _, d in ipairs(dirs or {}) do need(d) end
  return n
end
-- Of the paths \`to\` .. (each of \`rels\`), those in the trash (asked only when the trash holds
-- anything below \`to\`).
local function trashedAmong(to, rels)
  if below(T, to) == 0 then return 0 end
  local n = 0
  for _, rel in ipairs(rels) do n = n + inTrash(to .. rel) end
  return n
end
-- The files and folders below \`root\` of a tree of the files \`paths\` (all below root) and the
-- folders \`dirs\` (optional; at or below root): what rebuilding it touches, as a listing counts it.
local function treeSize(paths, root, dirs)
  local seen, n, cut = {}, #paths, #root
  local function count(d)
    while #d > cut and not seen[d] do
      seen[d] = true
      n = n + 1
      d = split(d)
    end
  end
  for _, p in ipairs(paths) do count((split(p))) end
  for _, d in ipairs(dirs or {}) do count(d) end
  return n
end

`;

/**
 * Commits a file (an upload, a written file): ARGV[9] path, [10] mode, [11] the uuid path to use
 * when the name is taken and mode is uuid, [12] the entry, [13] the upload id ('' for none),
 * [14] event template, [15] user id, [16] the byte quota (0: none), [17] the precondition ('' none,
 * '*' for If-None-Match, else the sha256 of If-Match: see precondition()). New bytes add their
 * size to the usage: refused when that would pass the quota. Bytes the user already has (an agent
 * writing a file again unchanged) are shared, not stored or counted twice. An If-Match that holds
 * replaces the file whatever the mode says.
 * A new path is refused when the entries it adds (room(): the file and its missing parents, less
 * its place in the trash) would pass MAX_FILES.
 * → {'OK', path, 'created'|'updated'} or {code, path, why} or {'QUOTA_EXCEEDED', used, limit,
 * 'FILE_QUOTA_BYTES' | 'MAX_FILES'} or {'PRECONDITION_FAILED', current sha256 or ''}.
 */
export const COMMIT = luaScript(`${PRELUDE}
local path, mode, v, upload = ARGV[9], ARGV[10], ARGV[12], ARGV[13]
-- One clock per commit: the file's modifiedAt is the time its history record keeps (NOW), so a
-- rewind to the time a write shows gives that write.
v = withRev(v, NOWS, field(v, 5))
if upload ~= '' and redis.call('HEXISTS', P .. 'up', upload) == 0 then return { 'UPLOAD_GONE', path } end
local failed = precondition(path, ARGV[17])
if failed then return failed end
if ARGV[17] ~= '' and ARGV[17] ~= '*' then mode = 'overwrite' end
local above = fileAbove(path)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
local old = redis.call('HGET', E, path)
local dir = (not old) and isdir(path)
if old or dir then
  if mode == 'uuid' then
    if ARGV[11] == '' then return { 'INVALID_PATH', path, 'the name is too long to add a unique suffix' } end
    path, old = ARGV[11], nil
  elseif dir then
    return { 'PATH_CONFLICT', path, 'a directory exists at this path' }
  elseif mode == 'error' then
    return { 'FILE_EXISTS', path }
  end
end
-- Bytes the user already has (the same sha256 and size, still referenced): the file shares that
-- object, which adds nothing, and the upload's own goes with the sweep.
local size, sha = field(v, 1), field(v, 3)
local same = redis.call('HGET', SK, sha)
if same and (same == field(v, 4) or redis.call('HGET', SZ, same) ~= size) then same = nil end
if same then v = withKey(v, same) end
local quota = tonumber(ARGV[16])
-- The upload's own reservation becomes its bytes; everyone else's still counts.
local others = used() + reserved() - (upload ~= '' and reservedBy(upload) or 0)
if quota > 0 and others + (same and 0 or tonumber(size)) > quota then return { 'QUOTA_EXCEEDED', tostring(others), ARGV[16], 'FILE_QUOTA_BYTES' } end
local full = room(old and 0 or fileAdds(path))
if full then return full end
if upload ~= '' then forget(upload) end
if same then redis.call('ZADD', G, NOWS, field(ARGV[12], 4)) end
if old then unref(field(old, 4)) end
written(path, old, v)
store(path, old, v)
ref(field(v, 4), field(v, 1), sha)
-- The content's search summary, when the uploader computed it (the same bytes: the same summary).
if ARGV[18] ~= '' then redis.call('HSET', P .. 'tri', field(v, 4), ARGV[18]) end
local t = old and 'updated' or 'created'
log(t, 'file', path, nil, v)
emit(ARGV[14], 'file.' .. t, path, { userId = ARGV[15], path = path, kind = 'file', size = tonumber(field(v, 1)), sha256 = field(v, 3) })
return { 'OK', path, t }
`);

/**
 * The checks of a commit without the commit (an upload refused before its bytes are sent):
 * ARGV[9] path, [10] mode, [11] the byte quota (0: none; a full quota takes no upload), [12] the
 * precondition (as COMMIT's).
 * → {'OK', 'free'|'file'|'directory'} or {code, path, why} or {'QUOTA_EXCEEDED', used, limit, quota}
 * (FILE_QUOTA_BYTES, or MAX_FILES when the file would add entries past it).
 */
export const PRECHECK = luaScript(`${PRELUDE}
local path, mode = ARGV[9], ARGV[10]
local failed = precondition(path, ARGV[12])
if failed then return failed end
if ARGV[12] ~= '' and ARGV[12] ~= '*' then mode = 'overwrite' end
local above = fileAbove(path)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
local file = redis.call('HEXISTS', E, path) == 1
local dir = (not file) and isdir(path)
if (file or dir) and mode ~= 'uuid' then
  if dir then return { 'PATH_CONFLICT', path, 'a directory exists at this path' } end
  if mode == 'error' then return { 'FILE_EXISTS', path } end
end
local quota = tonumber(ARGV[11])
local taken = used() + reserved()
if quota > 0 and taken >= quota then return { 'QUOTA_EXCEEDED', tostring(taken), ARGV[11], 'FILE_QUOTA_BYTES' } end
-- A file at a new path (or beside a taken name, uuid) must fit MAX_FILES, as its commit will check.
local full = room((file or dir) and ((mode == 'uuid') and 1 or 0) or fileAdds(path))
if full then return full end
return { 'OK', file and 'file' or (dir and 'directory' or 'free') }
`, { readOnly: true });

/**
 * Reserves quota for uploads' bytes before they are sent to the store: ARGV[9] the byte quota
 * (0: none), then (upload id, bytes) pairs: the bytes each upload will have sent once its next
 * piece is out (a running total: only growth reserves more). All of them or none: the growth of
 * every one together must fit. The commit (or, for an import's knowledge, the pin) turns a
 * reservation into the file's bytes; an abort or expiry gives it back.
 * → {'OK'} or {'UPLOAD_GONE', id} or {'QUOTA_EXCEEDED', used, quota, 'FILE_QUOTA_BYTES'}.
 */
export const RESERVE_UPLOAD = luaScript(`${PRELUDE}
local quota = tonumber(ARGV[9])
local held, grow = 0, 0
for i = 10, #ARGV, 2 do
  if redis.call('HEXISTS', P .. 'up', ARGV[i]) == 0 then return { 'UPLOAD_GONE', ARGV[i] } end
  local mine, total = reservedBy(ARGV[i]), tonumber(ARGV[i + 1])
  held = held + mine
  if total > mine then grow = grow + total - mine end
end
if grow == 0 then return { 'OK' } end
local others = used() + reserved() - held
if quota > 0 and others + held + grow > quota then return { 'QUOTA_EXCEEDED', tostring(others), ARGV[9], 'FILE_QUOTA_BYTES' } end
for i = 10, #ARGV, 2 do
  local mine, total = reservedBy(ARGV[i]), tonumber(ARGV[i + 1])
  if total > mine then
    redis.call('HSET', RSV, ARGV[i], total)
    redis.call('INCRBY', RSVT, total - mine)
  end
end
return { 'OK' }
`);

/**
 * Deletes a file, or a directory with all below it: ARGV[9] path, [10] '1' for recursive,
 * [11] event template, [12] user id, [13] If-Match (the file's sha256, '' for none). An explicit
 * folder that is empty goes without recursive, and every explicit folder that goes closes its
 * folder history (dirGone()). A tree of more than MAX_TREE_ENTRIES entries is refused
 * (bounded()). Nothing is added: the files go from the tree to the trash, where they still count
 * toward MAX_FILES. → {'OK', kind, files removed} or {code, path} or {'TREE_TOO_LARGE', path, limit}.
 */
export const DELETE = luaScript(`${PRELUDE}
local path, recursive = ARGV[9], ARGV[10] == '1'
local failed = precondition(path, ARGV[13])
if failed then return failed end
local old = redis.call('HGET', E, path)
if old then
  redis.call('HDEL', E, path)
  detach(path, old)
  trashed(path, old)
  log('deleted', 'file', path)
  emit(ARGV[11], 'file.deleted', path, { userId = ARGV[12], path = path, kind = 'file' })
  return { 'OK', 'file', 1 }
end
if not isdir(path) then return { 'FILE_NOT_FOUND', path } end
if not recursive and not emptyDir(path) then return { 'DIRECTORY_NOT_EMPTY', path } end
local large = bounded(below(Z, path), path)
if large then return large end
local lo, hi = '[' .. path .. '/', '(' .. path .. '0'
local removed, b, gone = 0, batch(), {}
for _, m in ipairs(redis.call('ZRANGEBYLEX', Z, lo, hi)) do
  local p, v = decode(m)
  if v then
    gone[#gone + 1] = p
    trashed(p, v, b)
    removed = removed + 1
  else
    if explicit(p) then dirGone(p) end
    redis.call('DEL', children(p))
  end
end
bulk({ 'HDEL', E }, gone)
flush(b)
redis.call('ZREMRANGEBYLEX', Z, lo, hi)
if explicit(path) then dirGone(path) end
redis.call('DEL', children(path))
detach(path, nil)
log('deleted', 'directory', path)
emit(ARGV[11], 'file.deleted', path, { userId = ARGV[12], path = path, kind = 'directory' })
return { 'OK', 'directory', removed }
`);

/**
 * Moves or copies a file or a directory: ARGV[9] from, [10] to, [11] mode, [12] the uuid path,
 * [13] 'move'|'copy', [14] event template, [15] user id, [16] If-Match on `from` and [17] on
 * the file `to` replaces (sha256s, '' for none; one on `to` that holds replaces it whatever the
 * mode says). Every file landing on a path, moved or copied, is a write there: a new revision in
 * its history. Explicit folders (docs/api/files.md#folders) go with their tree, empty or not: a
 * moved one's folder history closes at its old path and opens at its new one, a copy's opens.
 * The caller has checked that `to` is neither `from` nor below it. A tree of more than
 * MAX_TREE_ENTRIES entries below `from` is refused (bounded()), and so is a change whose entries
 * would pass MAX_FILES (room(): a copy adds what it creates, a move the folders it links at `to`
 * less those it leaves empty at `from`).
 * → {'OK', to, kind} or {code, path, why} or {'PRECONDITION_FAILED', current sha256 or ''} or
 * {'TREE_TOO_LARGE', from, limit} or {'QUOTA_EXCEEDED', used, limit, 'MAX_FILES'}.
 */
export const MOVE = luaScript(`${PRELUDE}
local from, to, mode, op = ARGV[9], ARGV[10], ARGV[11], ARGV[13]
local failed = precondition(from, ARGV[16]) or precondition(to, ARGV[17])
if failed then return failed end
if ARGV[17] ~= '' then mode = 'overwrite' end
local src = redis.call('HGET', E, from)
if not src and not isdir(from) then return { 'FILE_NOT_FOUND', from } end
local placed, dst = destination(src, to, mode, ARGV[12])
if not placed then return dst end
to = placed
local kind = src and 'file' or 'directory'
-- The bound and the entries the change adds (a move: those at \`to\` less those it takes from
-- \`from\`; a copy: all it creates), before the first write.
local adds
if src then
  adds = (dst and 0 or linking(to) - inTrash(to)) - (op == 'move' and unlinking(from, to) or 0)
else
  local n = below(Z, from)
  local large = bounded(n, from)
  if large then return large end
  -- The paths built here (to .. rel) keep the path rules: \`to\` passed them, its segments are
  -- stored ones, so only the whole length can grow past MAX_PATH, when \`to\` is longer than \`from\`.
  if #to > #from then
    local longest = 0
    for _, m in ipairs(redis.call('ZRANGEBYLEX', Z, '[' .. from .. '/', '(' .. from .. '0')) do
      local i = find(m, '\\0', 1, true)
      longest = math.max(longest, (i and i - 1 or #m) - #from)
    end
    if #to + longest > MAX_PATH then return { 'INVALID_PATH', to, 'a path below it would be longer than ' .. MAX_PATH .. ' UTF-8 bytes' } end
  end
  -- The trash paths below \`to\` that a file lands on leave the trash (as written() does).
  local rels = {}
  if below(T, to) > 0 then
    for _, m in ipairs(redis.call('ZRANGEBYLEX', Z, '[' .. from .. '/', '(' .. from .. '0')) do
      local i = find(m, '\\0', 1, true)
      if i then rels[#rels + 1] = sub(m, #from + 1, i - 1) end
    end
  end
  adds = linking(to) + (op == 'copy' and n or -unlinking(from, to)) - trashedAmong(to, rels)
end
local full = room(adds)
if full then return full end
if src then
  local v = op == 'copy' and withRev(src, NOWS, nextRev()) or withRev(src, nil, nextRev())
  if op == 'move' then
    redis.call('HDEL', E, from)
    detach(from, src)
  else
    ref(field(src, 4), field(src, 1), field(src, 3))
  end
  if dst then unref(field(dst, 4)) end
  written(to, dst, v)
  store(to, dst, v)
else
  local lo, hi = '[' .. from .. '/', '(' .. from .. '0'
  local cut = #from + 1
  local members = redis.call('ZRANGEBYLEX', Z, lo, hi)
  if op == 'move' then
    -- Every file lands on a new path: a new revision there (as for a file moved), so a folder
    -- moved away and back never lists one revision twice. Each directory's child set is built
    -- anew at its new path, whole (its subfolders, its files with their new entries, the marker
    -- of an explicit folder), and the old one deleted. Every other write is gathered and done in
    -- bulk, a few calls for the whole tree.
    local b, gone, entries, linked = batch(), {}, {}, {}
    local kids, dirs = { [from] = {} }, { from }
    -- An explicit folder's history ends at \`from\` and begins at \`to\` (dirGone(), dirMade()).
    if explicit(from) then
      kids[from][1] = '0'; kids[from][2] = ''
      dirGone(from)
      dirMade(to)
    end
    local folderOf = folders()
    for _, m in ipairs(members) do
      local i = find(m, '\\0', 1, true)
      local p = i and sub(m, 1, i - 1) or m
      local target = to .. sub(p, cut)
      -- The child set of the file's folder (a directory's own comes before its files: byte order).
      local parent, slash = folderOf(p)
      local siblings = kids[parent]
      if not siblings then
        siblings = {}
        kids[parent] = siblings
      end
      if i then
        -- The entry "size|mtime|sha256|key|revision", by its bars: all but the revision is one
        -- run (the new entry's head), and "sha256|key" one in the record.
        local e1 = find(m, '|', i + 1, true)
        local e2 = find(m, '|', e1 + 1, true)
        local e3 = find(m, '|', e2 + 1, true)
        local e4 = find(m, '|', e3 + 1, true)
        local size, key = sub(m, i + 1, e1 - 1), sub(m, e3 + 1, e4 - 1)
        local rev = nextRev()
        local moved = sub(m, i + 1, e4) .. rev
        gone[#gone + 1] = p
        entries[#entries + 1] = target
        entries[#entries + 1] = moved
        -- written(target, nil, moved, b), with the fields at hand (the sha256 only if its object
        -- needs it: see flushRefs()).
        push(target, rev .. '|0|' .. sub(m, e1 + 1, e2) .. size .. sub(m, e2, e4) .. NOWS .. '|', b, key, size, false)
        siblings[#siblings + 1] = '0'
        siblings[#siblings + 1] = sub(p, slash + 1) .. '\\0' .. moved
        linked[#linked + 1] = '0'
        linked[#linked + 1] = target .. '\\0' .. moved
      else
        siblings[#siblings + 1] = '0'
        siblings[#siblings + 1] = sub(p, slash + 1)
        dirs[#dirs + 1] = p
        local own = {}
        if explicit(p) then
          own[1] = '0'; own[2] = ''
          dirGone(p)
          dirMade(target)
        end
        kids[p] = own
        linked[#linked + 1] = '0'
        linked[#linked + 1] = target
      end
    end
    bulk({ 'HDEL', E }, gone)
    bulk({ 'HSET', E }, entries)
    redis.call('ZREMRANGEBYLEX', Z, lo, hi)
    bulk({ 'ZADD', Z }, linked)
    for _, d in ipairs(dirs) do
      redis.call('DEL', children(d))
      bulk({ 'ZADD', children(to .. d:sub(cut)) }, kids[d])
    end
    -- The paths that hold a file now leave the trash (as written() does); only a trash with
    -- paths below \`to\` can hold any of them.
    if redis.call('ZLEXCOUNT', T, '[' .. to .. '/', '(' .. to .. '0') > 0 then
      for i = 1, #entries, 2 do b.t[#b.t + 1] = entries[i] end
    end
    flush(b)
    detach(from, nil)
  else
    -- Copies get new revisions, so their members differ: the child sets are built anew (with
    -- the marker of every explicit folder, so an empty one is copied too).
    if explicit(from) then
      redis.call('ZADD', children(to), 0, '')
      dirMade(to)
    end
    for _, m in ipairs(members) do
      local p, v = decode(m)
      local target = to .. p:sub(cut)
      local parent, name = split(target)
      if v then
        ref(field(v, 4), field(v, 1), field(v, 3))
        v = withRev(v, NOWS, nextRev())
        redis.call('HSET', E, target, v)
        written(target, nil, v)
      elseif explicit(p) then
        redis.call('ZADD', children(target), 0, '')
        dirMade(target)
      end
      redis.call('ZADD', Z, 0, member(target, v))
      redis.call('ZADD', children(parent), 0, member(name, v))
    end
  end
  attach(to, nil)
end
local v = src and redis.call('HGET', E, to) or nil
if op == 'move' then
  redis.call('ZADD', MV, NOW, from)
  movedAway(from)
  log('moved', kind, to, from, v)
  emit(ARGV[14], 'file.moved', to, { userId = ARGV[15], from = from, path = to, kind = kind })
else
  log('created', kind, to, nil, v)
  local data = { userId = ARGV[15], path = to, kind = kind }
  if v then data.size = tonumber(field(v, 1)); data.sha256 = field(v, 3) end
  emit(ARGV[14], 'file.created', to, data)
end
return { 'OK', to, kind }
`);

/**
 * Creates a folder explicitly (docs/api/files.md#folders), with its missing parents: each gets
 * the marker that keeps it while it is empty, and opens its folder history (dirMade()). ARGV[9]
 * path, [10] event template, [11] user id. A directory already there (implicit or not) is kept, and
 * made explicit (opening its folder history when it was not explicit yet). The folders it creates
 * must fit MAX_FILES (room()).
 * → {'OK', 'created'|'existed'} or {'PATH_CONFLICT', path, why} or {'QUOTA_EXCEEDED', used, limit, 'MAX_FILES'}.
 */
export const CREATE_DIRECTORY = luaScript(`${PRELUDE}
local path = ARGV[9]
if path == ROOT then return { 'OK', 'existed' } end
local above = fileAbove(path)
if above then return { 'PATH_CONFLICT', above, 'a file exists where a directory is needed' } end
if redis.call('HEXISTS', E, path) == 1 then return { 'PATH_CONFLICT', path, 'a file exists at this path' } end
if isdir(path) then
  if not explicit(path) then
    redis.call('ZADD', children(path), 0, '')
    dirMade(path)
  end
  return { 'OK', 'existed' }
end
-- The missing parents (up to the nearest existing directory) are linked by attach, then marked.
local missing = { path }
local p = split(path)
while p ~= ROOT and redis.call('EXISTS', children(p)) == 0 do
  missing[#missing + 1] = p
  p = split(p)
end
local full = room(#missing)
if full then return full end
attach(path, nil)
for _, d in ipairs(missing) do
  redis.call('ZADD', children(d), 0, '')
  dirMade(d)
end
log('created', 'directory', path)
emit(ARGV[10], 'file.created', path, { userId = ARGV[11], path = path, kind = 'directory' })
return { 'OK', 'created' }
`);

/**
 * Files by path (read only): ARGV[9…] paths. → for each: the entry, 'D' for a directory, '' for
 * nothing.
 */
export const STAT = luaScript(`${PRELUDE}
local out = {}
for i = 9, #ARGV do
  local v = redis.call('HGET', E, ARGV[i])
  out[#out + 1] = v or (isdir(ARGV[i]) and 'D' or '')
end
return out
`, { readOnly: true });

/**
 * Pins files as an Agent's knowledge: ARGV[9] agent id, [10…] paths. → {'OK', entry…} or
 * {code, index} (1-based) or {'AGENT_REMOVED'}.
 */
export const PIN = luaScript(`${PRELUDE}
local agent = ARGV[9]
if redis.call('SISMEMBER', P .. 'knx', agent) == 1 then return { 'AGENT_REMOVED' } end
local out = { 'OK' }
for i = 10, #ARGV do
  local v = redis.call('HGET', E, ARGV[i])
  if not v then return { isdir(ARGV[i]) and 'IS_A_DIRECTORY' or 'FILE_NOT_FOUND', tostring(i - 9) } end
  out[#out + 1] = v
end
for i = 2, #out do
  local sha, key = field(out[i], 3), field(out[i], 4)
  if redis.call('HSETNX', P .. 'kn:' .. agent, sha, key) == 1 then ref(key, field(out[i], 1), sha) end
end
return out
`);

/** Removes an Agent's knowledge for good: ARGV[9] agent id. → how many pins went. */
export const UNPIN_AGENT = luaScript(`${PRELUDE}
local agent = ARGV[9]
redis.call('SADD', P .. 'knx', agent)
local pins = redis.call('HGETALL', P .. 'kn:' .. agent)
for i = 2, #pins, 2 do unref(pins[i]) end
redis.call('DEL', P .. 'kn:' .. agent)
return #pins / 2
`);

/**
 * Imports one file of the old layout, unless its path is taken or blocked (idempotent):
 * ARGV[9] path, [10] entry. → 1 when imported.
 */
export const IMPORT = luaScript(`${PRELUDE}
local path, v = ARGV[9], ARGV[10]
if redis.call('HEXISTS', E, path) == 1 or isdir(path) or fileAbove(path) then return 0 end
store(path, nil, v)
ref(field(v, 4), field(v, 1), field(v, 3))
written(path, nil, v)
return 1
`);

/** Imports one knowledge copy of the old layout: ARGV[9] agent id, [10] sha256, [11] object key, [12] its bytes. */
export const IMPORT_PIN = luaScript(`${PRELUDE}
if redis.call('SISMEMBER', P .. 'knx', ARGV[9]) == 1 then return 0 end
if redis.call('HSETNX', P .. 'kn:' .. ARGV[9], ARGV[10], ARGV[11]) == 1 then ref(ARGV[11], ARGV[12], ARGV[10]) return 1 end
return 0
`);

/**
 * Claims an upload that will not be committed (abort, expiry): ARGV[9] upload id. Its object
 * is queued as garbage in the same step, so its bytes go with the sweep whatever happens next,
 * also bytes a late PUT or a late multipart completion writes within the grace period.
 * → its record, or false when another caller claimed it or it was committed.
 */
export const CLAIM_UPLOAD = luaScript(`${PRELUDE}
local record = forget(ARGV[9])
if not record then return false end
redis.call('ZADD', G, NOWS, cjson.decode(record).key)
return record
`);

/**
 * Claims unreferenced objects whose grace has passed: ARGV[9] cutoff (ms), [10] max count.
 * → the keys, each now the caller's alone to delete.
 */
export const CLAIM_GARBAGE = luaScript(`${PRELUDE}
local keys = redis.call('ZRANGEBYSCORE', G, '-inf', ARGV[9], 'LIMIT', 0, tonumber(ARGV[10]))
local out = {}
for _, key in ipairs(keys) do
  redis.call('ZREM', G, key)
  if redis.call('HEXISTS', R, key) == 0 then
    out[#out + 1] = key
    redis.call('HDEL', P .. 'tri', key)
  end
end
return out
`, { allowOom: true });

/**
 * Keeps an upload pending (a later expiry, its record updated): ARGV[9] id, [10] record,
 * [11] expiry. → 1, or 0 when it is gone (expired and claimed, or committed).
 */
export const TOUCH_UPLOAD = luaScript(`${PRELUDE}
if not redis.call('ZSCORE', P .. 'upx', ARGV[9]) then return 0 end
redis.call('ZADD', P .. 'upx', ARGV[11], ARGV[9])
redis.call('HSET', P .. 'up', ARGV[9], ARGV[10])
return 1
`);

