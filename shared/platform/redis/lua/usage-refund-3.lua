--[[
usage-refund-3.lua: takes back the count of one call the counting script (verify-batch-n.lua)
counted `ok`, when the service then failed to answer it (a 5xx: scan.php's timeout,
scan_failed, internal_error). interface.md section 8 charges refusals, never the service's
own faults (docs/security.md, item 11a). Both keys carry the organization's hash tag.

KEYS[1]  the organization's usage stream (keys.usageStreamOf)
KEYS[2]  the cycle counter the call was counted in (keys.cycleUsed)
KEYS[3]  the key's endpoint-label set of the call's day (keys.endpointLabels)

ARGV[1]  now, clock milliseconds
ARGV[2]  day of the counted call, YYYY-MM-DD (UTC)
ARGV[3]  approximate MAXLEN of the usage stream
ARGV[4]  org id   ARGV[5] key id   ARGV[6] endpoint label
ARGV[7]  cycle start of the counted call (clock ms)
ARGV[8]  the fault's reason (timeout, scan_failed, internal_error)
ARGV[9]  "1" when ARGV[6] is a caller-chosen label (verify's `endpoint`), "0" for an endpoint's own
ARGV[10] the label unrecorded caller-chosen labels are reported under ("(other)")

The counter goes down by one, never below zero (it may have been rebuilt from PostgreSQL
meanwhile). One usage event {..., reason = ARGV[8], counted = 0, n = 1, refund = 1} tells
the usage actor to move that call from `ok`/counted to the fault's reason, uncounted.
The per-minute rate slot the call took is not given back: the call did arrive.
The refund names the label the counting script reported the call under: a caller-chosen
label not in the day's set (past the cap) was reported as ARGV[10], so it is taken back there.

Returns 1.
]]

local used = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if used > 0 then redis.call('DECR', KEYS[2]) end
local endpoint = ARGV[6]
if ARGV[9] == '1' and redis.call('SISMEMBER', KEYS[3], endpoint) == 0 then endpoint = ARGV[10] end
local event = {
  org = tonumber(ARGV[4]), key = tonumber(ARGV[5]), endpoint = endpoint, reason = ARGV[8],
  counted = 0, cycle = tonumber(ARGV[7]), n = 1, refund = 1,
}
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'data', cjson.encode({ at = tonumber(ARGV[1]), day = ARGV[2], events = { event } }))
return 1
