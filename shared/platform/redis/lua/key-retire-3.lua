--[[
key-retire-3.lua: takes a rotated key's snapshot out of Redis and hands its installations
to the key that replaced it, in one atomic step. The counting script (verify-batch-n.lua)
records installations in Redis first; the usage actor writes them to PostgreSQL later, so
a copy made from PostgreSQL alone misses what was seen in the last moments before the
rotation and the new key would refuse the site's own installation. Atomic with the
counting script: once the snapshot is gone the old key's calls are `stale`, so nothing
can be recorded on the old key after its installations were read. All keys carry the
organization's hash tag (a rotation keeps the organization).

KEYS[1]  the old key's snapshot hash (keys.keySnapshot)
KEYS[2]  the old key's installations hash (keys.installations)
KEYS[3]  the new key's installations hash

Each installation of the old key is set on the new key unless the new key already has
it (HSETNX: the new key's own status, an owner's decision on it, is newer). Then the old
key's snapshot and installations are deleted.

Returns the old key's installations as a flat array install, status, install, status...
(empty when there was nothing, e.g. when run a second time).
]]

local carried = redis.call('HGETALL', KEYS[2])
for i = 1, #carried, 2 do
  redis.call('HSETNX', KEYS[3], carried[i], carried[i + 1])
end
redis.call('DEL', KEYS[1], KEYS[2])
return carried
