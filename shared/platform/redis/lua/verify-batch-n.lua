--[[
verify-batch-n.lua: the counting step of verify.php for every call of one event-loop
turn on one shard. Variadic ("-n"): KEYS and ARGV grow with the batch. Calls are sent
in groups that share a key, its snapshot versions, endpoint label, minute and cycle
(a busy key sends many calls per run); within a group, alike calls (same outcome,
counted flag, installation and windows) are one entry with their number, and each key
name is sent once: ARGV refers to keys by their index in KEYS. Every key carries the shard's hash tag
(shared/redis/keys.ts), so the script runs on Redis Cluster unchanged. While its slot migrates
between masters and only some of its keys have moved, Redis answers TRYAGAIN and runs nothing:
the client retries (shared/redis/client.ts). Time is an argument (the service clock, which
the test clock moves): no TIME here.

KEYS[1]     usage stream of the shard (keys.usageStream)
KEYS[2..]   the distinct keys the groups name: key snapshot hashes (field v = version),
            org snapshot hashes (field v), rate windows (the key's window, the key's
            refusal window, per-source windows), cycle counters, installations
            hashes (install -> approved | pending | blocked), per key and day: the set
            of caller-chosen endpoint labels recorded and the count of installations
            recorded pending; per key and minute: the installations sighted (a hash)

ARGV: the fields below, named in shared/platform/redis/script-args.ts (VERIFY_BATCH_ARGS),
which loadScript writes here as Lua locals in place of the --@layout line. A head:
ARG_NOW          now, clock milliseconds
ARG_DAY          day of now, YYYY-MM-DD (UTC)
ARG_MAXLEN       approximate MAXLEN of the usage stream
ARG_GROUPS       number of groups
ARG_OTHER_LABEL  the label a caller-chosen endpoint label is folded into past the cap ("(other)")
ARG_PENDING_CAP  cap of installations recorded pending per key per day
ARG_LABEL_CAP    cap of distinct caller-chosen endpoint labels per key per day
then per group, GROUP_FIELDS fields (offsets from the group's start):
  G_KEY_SNAPSHOT index in KEYS of the key snapshot   G_ORG_SNAPSHOT index of the org snapshot
  G_CYCLE_USED index of the cycle counter            G_INSTALLATIONS index of the installations hash
  G_KEY_VERSION key snapshot version the ingress judged with
  G_ORG_VERSION org snapshot version                 G_RATE rate_per_minute of the key
  G_PER_SOURCE rate_per_source_per_minute of the key ("-1" = no per-source limit)
  G_ALLOWANCE allowance of the cycle ("-1" = unlimited)
  G_ORG org id   G_KEY key id   G_ENDPOINT endpoint label   G_CYCLE_START cycle start (clock ms)
  G_LABELS index of the key's endpoint-label set of the day ("0": the label is an endpoint's
     own, e.g. `verify` or `content`: never capped, never recorded in the set)
  G_PENDING_INSTALLS index of the key's pending-installation counter of the day
  G_SIGHTINGS index of the key's installation sightings of the minute ("0": no call of the
     group names an installation)
  G_SHAPES number of shapes s (kinds of alike calls)
and then per shape, SHAPE_FIELDS fields:
  S_CALLS number of calls k of this shape (each handled in turn, as if sent k times),
  S_OUTCOME outcome of the pure rules ("ok" or a refusal reason),
  S_COUNTS "1" when that outcome counts against the allowance, "0" when not (key_suspended),
  S_INSTALL installation id ("" when the endpoint takes none; the unnamed id for a verify call that sent none),
  S_WINDOW index of the rate window the call takes a slot of: the key's window of the minute, or,
    for a refusal of the pure rules or the route's check (place, scope, key state, bot check),
    the key's separate refusal window of the minute, so refused calls never use up honest
    callers' slots,
  S_SOURCE_WINDOW index of the per-source window of the minute ("0" when the key has no per-source limit)
  S_REFUSAL_WINDOW index of the key's refusal window of the minute for an "ok" shape naming an
    installation ("0" otherwise): when the installation step will refuse the shape's calls
    (the installation is pending or blocked, or unknown on a key that has installations),
    they are gated by and take this window instead of S_WINDOW, like the rules' refusals

Returns the answers of the calls, groups in order, shapes in order, the k calls of a
shape in order, run-length encoded: a flat array of pairs (answer, number of consecutive
calls with that answer), two neighbouring pairs never with the same answer. An answer is:
  "stale"            a snapshot version differs or the snapshot is gone: nothing was
                     counted or recorded; the ingress reloads and asks once more
  "ok" | <reason>    the answer

Per call, unless stale (shared/enforcement/counting.ts says why this order):
  1. an outcome that does not count (key_suspended) is answered as is, counted 0;
  2. source gate, when the key has a per-source limit: the source's window >=
     rate_per_source_per_minute -> "rate_limited", counted 0, no slot taken anywhere,
     so a flood from one source never reaches the key's shared window;
  3. rate gate: the call's window >= rate_per_minute -> "rate_limited", counted 0, no slot taken;
  4. allowance gate: allowance >= 0 and counter >= allowance -> "usage_limit_exceeded", counted 0;
  5. installation, when the outcome is "ok" and an id was sent: unknown id on a key with
     no installation -> recorded "approved", the unnamed id included (the first
     installation a key is seen on keeps working, so a site that never names one owns
     "(unnamed)" before a stranger can name another); unknown id otherwise ->
     "installation_limit_reached" when ARG_PENDING_CAP were already recorded pending for the key
     today (nothing recorded), else recorded "pending", answer "installation_pending";
     "pending" -> "installation_pending"; "blocked" -> "installation_blocked". A known
     installation reaching this step is a sighting: the first of the minute (HSETNX in
     the minute's sightings hash) puts the installation in the usage event, so the usage
     actor moves last_seen_at, at most once per installation and minute;
  6. counted 1: the call's rate window +1 and the source window +1 (each expires 120 s
     after its last write), cycle counter +1 (expires 7 days after the cycle ends).
The k calls of a shape are answered as k calls in turn would be, in closed form when the
label is an endpoint's own (G_LABELS "0"): a refused call takes nothing, so once one is
refused every later call of the shape is refused alike, and the installation's status the
first passing call found holds for the rest (it alone records or sights it). So the first
min(k, what each window and the allowance have left) calls pass, the rest get the reason
of the first gate that is full. A caller-chosen label runs the calls one by one.
The endpoint label never refuses a call. A caller-chosen label (G_LABELS not "0") is
recorded in the key's set of the day only by a call answered "ok", while the set holds
fewer than ARG_LABEL_CAP; a call whose label is not in the set (a refusal, or past the cap) is
reported under ARG_OTHER_LABEL. So neither refused calls nor a flood of labels can add labels
without bound, and no label can shut the key.
One XADD per run carries the usage events of every call not stale, as field
data = JSON {at, day, events: [{org, key, endpoint, reason, counted, cycle, n,
install?, install_status?, install_new?}]}: calls of a group with the same reason, counted
flag and label are one event with n = their number; a call that recorded or sighted an
installation is an event of its own (install_status: its status; install_new = 1 when
this call recorded it, which is how the usage actor knows an installation was first
recorded pending and tells the owner once). No address is ever
part of an event (a source window's name holds a digest of the source, never the
address, and lives two minutes).
]]

local CYCLE_MS = 30 * 24 * 3600 * 1000
local KEEP_MS = 7 * 24 * 3600 * 1000

--@layout

-- A number field of ARGV. Parsing strings (strtod) is a good part of this script's own CPU:
-- `+ 0` parses the string once, where tonumber() parses it twice (lua_isnumber, then
-- lua_tonumber). The caller writes every such field as a number.
local function num(i)
  return ARGV[i] + 0
end
-- The key an index field of ARGV names; nil for "0" (none), as KEYS[0] is, without parsing it.
local function keyAt(i)
  local index = ARGV[i]
  if index == '0' then return nil end
  return KEYS[index + 0]
end

local now = num(ARG_NOW)
local day = ARGV[ARG_DAY]
local maxlen = ARGV[ARG_MAXLEN]
local groups = num(ARG_GROUPS)
local other = ARGV[ARG_OTHER_LABEL]
-- The caps (ARG_PENDING_CAP, ARG_LABEL_CAP) are read where a new installation or label
-- needs them, which a run seldom has.
-- Expiries in seconds, as strings: Redis formats a Lua number argument with %.17g, which
-- costs more. Two days (the day's label set and pending count), two minutes (a window, the
-- minute's sightings).
local DAY_S = '172800'
local WINDOW_S = '120'

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
local function take(key, n)
  counters[key] = counter(key) + n
  added[key] = (added[key] or 0) + n
end

local results, events = {}, {}
local lastAnswer = nil
-- n more calls answered `result`, run-length encoded (the header says how).
local function answer(result, n)
  if n <= 0 then return end
  if result == lastAnswer then
    results[#results] = results[#results] + n
  else
    results[#results + 1] = result
    results[#results + 1] = n
    lastAnswer = result
  end
end

local a = HEAD_FIELDS
for _ = 1, groups do
  local keySnap, orgSnap = keyAt(a + G_KEY_SNAPSHOT), keyAt(a + G_ORG_SNAPSHOT)
  local usedKey, instKey = keyAt(a + G_CYCLE_USED), keyAt(a + G_INSTALLATIONS)
  local keyV, orgV = ARGV[a + G_KEY_VERSION], ARGV[a + G_ORG_VERSION]
  local rate, perSource, allowance = num(a + G_RATE), num(a + G_PER_SOURCE), num(a + G_ALLOWANCE)
  local org, key, endpoint, cycle = num(a + G_ORG), num(a + G_KEY), ARGV[a + G_ENDPOINT], num(a + G_CYCLE_START)
  -- nil for an endpoint's own label (never capped) and when no call of the group names an installation.
  local labelsKey, seenKey = keyAt(a + G_LABELS), keyAt(a + G_SIGHTINGS)
  -- Where the pending-installation counter is named: only a new installation needs its key.
  local pendingField = a + G_PENDING_INSTALLS
  local shapes = num(a + G_SHAPES)
  a = a + GROUP_FIELDS
  -- The caller-chosen label's state for the group: nil until a call needs it, then whether
  -- it is in the key's set of the day; labelsFull once an "ok" call found the set full.
  -- One SISMEMBER per group, not per call.
  local labelIn, labelsFull = nil, false
  local stale = keyV == '' or version(keySnap) ~= keyV or version(orgSnap) ~= orgV
  local merged, mergedOther = {}, {}

  -- n more calls of the group in the usage events, merged by reason, counted flag and label.
  local function record(label, result, counted, n)
    if n <= 0 then return end
    local bucket = merged
    if label ~= endpoint then bucket = mergedOther end
    -- Not `result .. counted`: turning the number into a string costs a sprintf.
    local tag = result .. (counted == 1 and '1' or '0')
    local event = bucket[tag]
    if event then
      event.n = event.n + n
    else
      event = { org = org, key = key, endpoint = label, reason = result, counted = counted, cycle = cycle, n = n }
      bucket[tag] = event
      events[#events + 1] = event
    end
  end

  -- The first gate a call meets full, in the order of the rules; nil when every one has room.
  local function full(sourceKey, rateKey)
    if sourceKey and counter(sourceKey) >= perSource then return 'rate_limited' end
    if counter(rateKey) >= rate then return 'rate_limited' end
    if allowance >= 0 and counter(usedKey) >= allowance then return 'usage_limit_exceeded' end
    return nil
  end

  -- The installation step (5.) of a passing "ok" call that names one: its status, and
  -- whether this call recorded it (newStatus) or sighted it first this minute (sighted).
  -- `read`: the status refusedInstallation read for this shape (false = none recorded),
  -- nil when it did not ask. Nothing writes the installations hash between the two (this
  -- step is the only writer, and runs once per shape), so it is still the hash's answer.
  local function installation(install, read)
    local status, newStatus, sighted = read, nil, nil
    if status == nil then status = redis.call('HGET', instKey, install) or false end
    if not status then
      local pendingKey = keyAt(pendingField)
      if redis.call('HLEN', instKey) == 0 then
        -- The first installation a key is seen on keeps working, "(unnamed)" included.
        status = 'approved'
      elseif tonumber(redis.call('GET', pendingKey) or '0') >= num(ARG_PENDING_CAP) then
        status = 'over_limit'
      else
        status = 'pending'
        redis.call('INCR', pendingKey)
        redis.call('EXPIRE', pendingKey, DAY_S)
      end
      if status ~= 'over_limit' then
        redis.call('HSET', instKey, install, status)
        newStatus = status
      end
    end
    -- A recorded installation's first call of the minute is a sighting (last_seen_at).
    if status ~= 'over_limit' and seenKey and redis.call('HSETNX', seenKey, install, '1') == 1 then
      redis.call('EXPIRE', seenKey, WINDOW_S)
      if not newStatus then sighted = status end
    end
    return status, newStatus, sighted
  end

  -- Whether the installation step will refuse calls naming `install` (read only: the step
  -- itself records), and the status read (false = none recorded), which the step then uses
  -- instead of asking again. An unknown installation is approved only on a key that has none.
  local function refusedInstallation(install)
    local status = redis.call('HGET', instKey, install) or false
    if status then return status ~= 'approved', status end
    return redis.call('HLEN', instKey) > 0, status
  end

  local function statusAnswer(status, result)
    if status == 'blocked' then return 'installation_blocked' end
    if status == 'over_limit' then return 'installation_limit_reached' end
    if status == 'pending' then return 'installation_pending' end
    return result
  end

  -- n passing calls take a slot of each window and of the allowance.
  local function takeAll(sourceKey, rateKey, n)
    if sourceKey then take(sourceKey, n) end
    take(rateKey, n)
    take(usedKey, n)
    cycleEnds[usedKey] = cycle + CYCLE_MS
  end

  -- The call that recorded or sighted an installation is an event of its own.
  local function installEvent(label, result, install, newStatus, sighted)
    local recorded = nil
    if newStatus then recorded = 1 end
    events[#events + 1] = {
      org = org, key = key, endpoint = label, reason = result, counted = 1, cycle = cycle, n = 1,
      install = install, install_status = newStatus or sighted, install_new = recorded,
    }
  end

  for _ = 1, shapes do
    local calls, outcome, counts, install = num(a + S_CALLS), ARGV[a + S_OUTCOME], ARGV[a + S_COUNTS], ARGV[a + S_INSTALL]
    local rateKey, sourceKey = keyAt(a + S_WINDOW), nil
    if perSource >= 0 then sourceKey = keyAt(a + S_SOURCE_WINDOW) end
    local refusalKey = keyAt(a + S_REFUSAL_WINDOW)
    a = a + SHAPE_FIELDS
    -- Calls the installation step will refuse are a stranger's to make at will (any id, a
    -- public key): they take the refusal window, never the slots of the key's own installations.
    -- `read`: the installation's status as read here, for the installation step (nil = not read).
    local read = nil
    if not stale and refusalKey and counts == '1' and outcome == 'ok' and install ~= '' then
      local refused
      refused, read = refusedInstallation(install)
      if refused then rateKey = refusalKey end
    end
    if stale then
      answer('stale', calls)
    elseif counts ~= '1' then
      -- Not counted: no gate, nothing recorded, and never "ok", so the label set is only read.
      answer(outcome, calls)
      local label = endpoint
      if labelsKey then
        if labelIn == nil then labelIn = redis.call('SISMEMBER', labelsKey, endpoint) == 1 end
        if not labelIn then label = other end
      end
      record(label, outcome, 0, calls)
    elseif not labelsKey then
      -- Closed form (the header says why it answers as the calls one by one would).
      local passing = calls
      if sourceKey then passing = math.min(passing, perSource - counter(sourceKey)) end
      passing = math.min(passing, rate - counter(rateKey))
      if allowance >= 0 then passing = math.min(passing, allowance - counter(usedKey)) end
      if passing > 0 then
        local result, newStatus, sighted = outcome, nil, nil
        if outcome == 'ok' and install ~= '' then
          local status
          status, newStatus, sighted = installation(install, read)
          result = statusAnswer(status, outcome)
        end
        takeAll(sourceKey, rateKey, passing)
        answer(result, passing)
        if newStatus or sighted then
          installEvent(endpoint, result, install, newStatus, sighted)
          record(endpoint, result, 1, passing - 1)
        else
          record(endpoint, result, 1, passing)
        end
      else
        passing = 0
      end
      if passing < calls then
        local refused = full(sourceKey, rateKey)
        answer(refused, calls - passing)
        record(endpoint, refused, 0, calls - passing)
      end
    else
      -- A caller-chosen label: call by call, for the label set's own rules.
      -- The installation's status as the shape's first passing call left it: false = not asked yet.
      local known = false
      for _ = 1, calls do
        local result, counted, newStatus, sighted = outcome, 0, nil, nil
        local refused = full(sourceKey, rateKey)
        if refused then
          result = refused
        else
          if outcome == 'ok' and install ~= '' then
            local status = known
            if status == false then
              status, newStatus, sighted = installation(install, read)
              known = status
            end
            result = statusAnswer(status, outcome)
          end
          takeAll(sourceKey, rateKey, 1)
          counted = 1
        end
        answer(result, 1)
        local label = endpoint
        if labelIn == nil then labelIn = redis.call('SISMEMBER', labelsKey, endpoint) == 1 end
        if not labelIn then
          -- Recorded only by a call that passed every rule and gate, while the set has room.
          if result == 'ok' and not labelsFull and redis.call('SCARD', labelsKey) < num(ARG_LABEL_CAP) then
            redis.call('SADD', labelsKey, endpoint)
            redis.call('EXPIRE', labelsKey, DAY_S)
            labelIn = true
          else
            if result == 'ok' then labelsFull = true end
            label = other
          end
        end
        if newStatus or sighted then
          installEvent(label, result, install, newStatus, sighted)
        else
          record(label, result, counted, 1)
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
    redis.call('EXPIRE', key, WINDOW_S)
  end
end

if #events > 0 then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*', 'data', cjson.encode({ at = now, day = day, events = events }))
end

return results
