--[[
lease-claim-1.lua: takes or renews the lease on one SIEM destination's delivery loop
(actors/siem/leases.ts). A lease is a plain key holding its owner's name with a PX expiry:
the process named there is the only one running the destination's loop until it expires.

KEYS[1]  the destination's lease (keys.siemLease)

ARGV[1]  the owner: the pusher process's name (also its consumer name in group `siem`)
ARGV[2]  time to live, milliseconds

Free, or already held by ARGV[1] (a renewal, or a restart under the same name): set to
ARGV[1] with the new expiry. Held by another owner: left alone.

Returns 1 when ARGV[1] holds the lease afterwards, 0 when another owner does.
]]

local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1
