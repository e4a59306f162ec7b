--[[
lease-release-1.lua: gives back the lease on one SIEM destination's delivery loop, after
the loop stopped (actors/siem/leases.ts), so the next owner need not wait for the expiry.

KEYS[1]  the destination's lease (keys.siemLease)

ARGV[1]  the owner giving it back

A lease that expired and was taken by another owner meanwhile is not touched.

Returns 1 when the lease was deleted, 0 when ARGV[1] did not hold it.
]]

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
