--[[
read-unless-trimmed-n.lua: XREADGROUP of a group's new entries (`>`), unless entries after the
group's cursor were trimmed (MAXLEN) before the group read them: then nothing is read and the
cursor stays below the hole, for whoever fills it (the SIEM pusher replays from PostgreSQL).
The check and the read are one atomic step, so no trim comes between them; a plain
XREADGROUP would read on from the oldest entry left and the hole would go unnoticed.

KEYS[1]  the stream
KEYS[2]  optional: a hash where each entry read is recorded, entry id → its `eid` field (the
         event id; read from `data` for an entry without one), until its consumer removes it
KEYS[3]  optional, with KEYS[2]: a sorted set of ids scored by entry millisecond, pruned
         below the newest entry read and of the ids read in its millisecond (the SIEM
         fan-out's `late` set: actors/siem/replay.ts)
ARGV[1]  group
ARGV[2]  consumer
ARGV[3]  COUNT

A hole, in Redis's terms (actors/siem/replay.ts `hasGap` is the same rule): the group's
`last-delivered-id` is below the oldest entry left, and more entries were added after it than
the stream holds. Added after it: `entries-added` minus the group's `entries-read`; when
Redis has no `entries-read` (a group made at `0` that has not read yet), the group's `lag`,
Redis's own estimate; when it has neither (an XDEL inside the stream), a hole is assumed.
An empty stream has a hole when that count is above 0. Only when the cursor is below the
oldest entry does the check cost more than XINFO GROUPS and an XRANGE of one entry.

Returns {0} for a hole (nothing read); otherwise {1, cursor, entries}: the group's cursor
before this read and the entries read (id, then the flat field list; possibly none).
Errors NOGROUP when the stream or the group does not exist.
]]

local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
if not ok then return redis.error_reply('NOGROUP No such key ' .. KEYS[1]) end
local group = nil
for _, raw in ipairs(groups) do
  local fields = {}
  for i = 1, #raw, 2 do fields[raw[i]] = raw[i + 1] end
  if fields['name'] == ARGV[1] then group = fields end
end
if group == nil then return redis.error_reply('NOGROUP No such consumer group ' .. ARGV[1] .. ' for key ' .. KEYS[1]) end
local cursor = group['last-delivered-id']

-- a < b for stream ids "ms-seq" (digits compared as strings: a sequence may pass 2^53)
local function below(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if #am ~= #bm then return #am < #bm end
  if am ~= bm then return am < bm end
  if #as ~= #bs then return #as < #bs end
  return as < bs
end

local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
if first == nil or below(cursor, first[1]) then
  local raw = redis.call('XINFO', 'STREAM', KEYS[1])
  local info = {}
  for i = 1, #raw, 2 do info[raw[i]] = raw[i + 1] end
  local unread = false
  if group['entries-read'] then
    unread = info['entries-added'] - group['entries-read']
  elseif group['lag'] then
    unread = group['lag']
  end
  if first == nil then
    if unread and unread > 0 then return {0} end
  elseif (not unread) or unread > info['length'] then
    return {0}
  end
end

local reply = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS', KEYS[1], '>')
local entries = {}
if reply then entries = reply[1][2] end
if KEYS[2] and #entries > 0 then
  local function eventIdOf(fields)
    local data = nil
    for i = 1, #fields, 2 do
      if fields[i] == 'eid' then return fields[i + 1] end
      if fields[i] == 'data' then data = fields[i + 1] end
    end
    if data == nil then return nil end
    local ok, decoded = pcall(cjson.decode, data)
    if ok and type(decoded) == 'table' and type(decoded['event']) == 'table' and type(decoded['event']['id']) == 'number' then
      return string.format('%d', decoded['event']['id'])
    end
    return nil
  end
  -- A command over a list, in chunks: a Lua call takes a bounded number of arguments.
  local function inChunks(command, key, list)
    for i = 1, #list, 1000 do
      redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    end
  end
  local eids = {}
  local pairs_ = {}
  for i, entry in ipairs(entries) do
    eids[i] = eventIdOf(entry[2])
    if eids[i] ~= nil then
      pairs_[#pairs_ + 1] = entry[1]
      pairs_[#pairs_ + 1] = eids[i]
    end
  end
  inChunks('HSET', KEYS[2], pairs_)
  if KEYS[3] then
    -- Below the newest entry's millisecond by score; in that millisecond by member, the event
    -- ids just read (a late id read here is delivered or in `inhand`: never replayed as late).
    local newest = string.match(entries[#entries][1], '^(%d+)-')
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. newest)
    local read = {}
    for i, entry in ipairs(entries) do
      if eids[i] ~= nil and string.match(entry[1], '^(%d+)-') == newest then read[#read + 1] = eids[i] end
    end
    inChunks('ZREM', KEYS[3], read)
  end
end
return {1, cursor, entries}
