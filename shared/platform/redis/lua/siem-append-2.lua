--[[
siem-append-2.lua: appends one event to a SIEM destination's stream (the fan-out,
actors/siem/handler.ts) with the highest event id ever appended to that stream up to and
including this entry, in the field `hi`. The fan-out appends out of id order (messages side
by side, claims of a dead pusher's messages a minute late, relays' batches in either order),
so after a trim (MAXLEN) the oldest entry left does not bound the ids trimmed before it; its
`hi` does: a replay (actors/siem/replay.ts) sends the ids up to it that the stream no longer
holds. An entry written without `hi` (a dead letter put back, an entry from before this
field) is passed over: the newest of the last 16 entries that has one carries the maximum.

The entry also carries the event's id in the field `eid` (the loop's read records it without
parsing `data`). An event appended below the `hi` before it is late: an id already on the
stream is higher, so once that one is delivered, `last_event_id` no longer bounds this one.
Its id goes into the stream's `late` set (score: the entry's millisecond), which the replay
reads when the entry is trimmed unread, and the loop's read prunes behind its cursor; the
set keeps at most MAXLEN members (the oldest go first).

KEYS[1]  the destination's stream
KEYS[2]  its `late` sorted set (keys.ts streamSide)
ARGV[1]  approximate MAXLEN (also the `late` set's cap)
ARGV[2]  the entry's `data` (JSON of the fan-out message)
ARGV[3]  the event's id

Returns the new entry's id.
]]

local hi = tonumber(ARGV[3])
-- The newest entry carries the maximum so far; only when it has none is it worth looking further.
local function hiOf(entry)
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'hi' then return tonumber(fields[i + 1]) end
  end
  return nil
end
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local found = newest[1] and hiOf(newest[1])
if newest[1] and found == nil then
  for _, entry in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 16)) do
    found = hiOf(entry)
    if found ~= nil then break end
  end
end
if found ~= nil and found > hi then hi = found end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'data', ARGV[2], 'hi', string.format('%d', hi), 'eid', ARGV[3])
if hi > tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[2], string.match(id, '^(%d+)-'), ARGV[3])
  local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[1])
  if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1) end
end
return id
