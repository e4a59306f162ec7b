--[[
verify-batch-n.lua: the counting step of verify.php for every call of one event-loop
turn on one shard. Variadic ("-n"): KEYS and ARGV grow with the batch. Calls are sent
in groups that share a key, its snapshot versions, endpoint label, minute and cycle
(a busy key sends many calls per run), and each key name is sent once: ARGV refers to
keys by their index in KEYS. Every key carries the shard's hash tag {s:N}, so the
script runs on Redis Cluster unchanged. Time is an argument (the service clock, which
the test clock moves): no TIME here.

KEYS[1]     usage stream of the shard (keys.usageStream)
KEYS[2..]   the distinct keys the groups name: key snapshot hashes (field v = version),
            org snapshot hashes (field v), rate windows, cycle counters, installations
            hashes (install -> approved | pending | blocked)

ARGV[1]  now, clock milliseconds
ARGV[2]  day of now, YYYY-MM-DD (UTC)
ARGV[3]  approximate MAXLEN of the usage stream
ARGV[4]  number of groups
then per group, 13 fields:
  1 index in KEYS of the key snapshot      2 index of the org snapshot
  3 index of the rate window of the minute 4 index of the cycle counter
  5 index of the installations hash        6 key snapshot version the ingress judged with
  7 org snapshot version                   8 rate_per_minute of the key
  9 allowance of the cycle ("-1" = unlimited)
  10 org id   11 key id   12 endpoint label   13 cycle start (clock ms)
  14 number of calls m
and then per call, 3 fields:
  outcome of the pure rules ("ok" or a refusal reason),
  "1" when that outcome counts against the allowance, "0" when not (key_suspended),
  installation id ("" when none was sent)

Returns an array with one string per call, groups in order, calls in order:
  "stale"            a snapshot version differs or the snapshot is gone: nothing was
                     counted or recorded; the ingress reloads and asks once more
  "ok" | <reason>    the answer

Per call, unless stale (shared/enforcement/counting.ts says why this order):
  1. an outcome that does not count (key_suspended) is answered as is, counted 0;
  2. rate gate: window >= rate_per_minute -> "rate_limited", counted 0, no slot taken;
  3. allowance gate: allowance >= 0 and counter >= allowance -> "usage_limit_exceeded", counted 0;
  4. installation, when the outcome is "ok" and an id was sent: unknown id on a key with
     no installation -> recorded "approved" (the first keeps working); unknown id
     otherwise -> recorded "pending", answer "installation_pending"; "pending" ->
     "installation_pending"; "blocked" -> "installation_blocked";
  5. counted 1: rate window +1 (expires 120 s after its last write), cycle counter +1
     (expires 7 days after the cycle ends).
One XADD per run carries the usage events of every call not stale, as field
data = JSON {at, day, events: [{org, key, endpoint, reason, counted, cycle, n,
install?, install_status?}]}: calls of a group with the same reason and counted flag
are one event with n = their number; a call that recorded an installation is an
event of its own. No address is ever part of an event.
]]

local CYCLE_MS = 30 * 24 * 3600 * 1000
local KEEP_MS = 7 * 24 * 3600 * 1000

local now = tonumber(ARGV[1])
local day = ARGV[2]
local maxlen = ARGV[3]
local groups = tonumber(ARGV[4])

local versions = {}
local function version(key)
  local v = versions[key]
  if v == nil then
    v = redis.call('HGET', key, 'v') or ''
    versions[key] = v
  end
  return v
end

local counters, added, cycleEnds = {}, {}, {}
local function counter(key)
  local c = counters[key]
  if c == nil then
    c = tonumber(redis.call('GET', key) or '0') or 0
    counters[key] = c
  end
  return c
end
local function take(key)
  counters[key] = counter(key) + 1
  added[key] = (added[key] or 0) + 1
end

local results, events = {}, {}
local a = 4
for _ = 1, groups do
  local keySnap, orgSnap = KEYS[tonumber(ARGV[a + 1])], KEYS[tonumber(ARGV[a + 2])]
  local rateKey, usedKey, instKey = KEYS[tonumber(ARGV[a + 3])], KEYS[tonumber(ARGV[a + 4])], KEYS[tonumber(ARGV[a + 5])]
  local keyV, orgV = ARGV[a + 6], ARGV[a + 7]
  local rate, allowance = tonumber(ARGV[a + 8]), tonumber(ARGV[a + 9])
  local org, key, endpoint, cycle = tonumber(ARGV[a + 10]), tonumber(ARGV[a + 11]), ARGV[a + 12], tonumber(ARGV[a + 13])
  local calls = tonumber(ARGV[a + 14])
  a = a + 14
  local stale = keyV == '' or version(keySnap) ~= keyV or version(orgSnap) ~= orgV
  local merged = {}
  for _ = 1, calls do
    local outcome, counts, install = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
    a = a + 3
    local result, counted, newStatus = outcome, 0, nil
    if stale then
      result = 'stale'
    elseif counts == '1' then
      if counter(rateKey) >= rate then
        result = 'rate_limited'
      elseif allowance >= 0 and counter(usedKey) >= allowance then
        result = 'usage_limit_exceeded'
      else
        if outcome == 'ok' and install ~= '' then
          local status = redis.call('HGET', instKey, install)
          if not status then
            if redis.call('HLEN', instKey) == 0 then status = 'approved' else status = 'pending' end
            redis.call('HSET', instKey, install, status)
            newStatus = status
          end
          if status == 'blocked' then
            result = 'installation_blocked'
          elseif status ~= 'approved' then
            result = 'installation_pending'
          end
        end
        take(rateKey)
        take(usedKey)
        cycleEnds[usedKey] = cycle + CYCLE_MS
        counted = 1
      end
    end
    results[#results + 1] = result
    if not stale then
      if newStatus then
        events[#events + 1] = {
          org = org, key = key, endpoint = endpoint, reason = result, counted = counted, cycle = cycle, n = 1,
          install = install, install_status = newStatus,
        }
      else
        local tag = result .. counted
        local event = merged[tag]
        if event then
          event.n = event.n + 1
        else
          event = { org = org, key = key, endpoint = endpoint, reason = result, counted = counted, cycle = cycle, n = 1 }
          merged[tag] = event
          events[#events + 1] = event
        end
      end
    end
  end
end

for key, add in pairs(added) do
  redis.call('INCRBY', key, add)
  local cycleEnd = cycleEnds[key]
  if cycleEnd then
    if redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, math.max(cycleEnd - now, 0) + KEEP_MS)
    end
  else
    redis.call('EXPIRE', key, 120)
  end
end

if #events > 0 then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*', 'data', cjson.encode({ at = now, day = day, events = events }))
end

return results
