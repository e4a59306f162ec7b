--[[
lease-renew-1.lua: extends the lease on one SIEM destination's delivery loop for the
process running it (actors/siem/leases.ts). Unlike lease-claim-1.lua it never takes a free
lease: a renewal racing the holder's own release (or arriving after the lease expired)
must not take back what the process just gave up.

KEYS[1]  the destination's lease (keys.siemLease)

ARGV[1]  the owner
ARGV[2]  time to live, milliseconds

Returns 1 when the lease was ARGV[1]'s and is extended, 0 otherwise (free or another's).
]]

if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
