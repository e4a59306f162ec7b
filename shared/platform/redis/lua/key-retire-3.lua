--[[
key-retire-3.lua: takes a replaced key's snapshot out of Redis and hands its installations
to the key that replaced it, in one atomic step. Runs when the old key really ends: at once
for a rotation without grace, at the end of the grace (or at an earlier revocation)
otherwise. The counting script (verify-batch-n.lua) records installations in Redis first;
the usage actor writes them to PostgreSQL later, so a copy made from PostgreSQL alone
misses what was seen in the last moments and the new key would refuse the site's own
installation. Atomic with the counting script: once the snapshot is gone the old key's
calls are `stale`, so nothing can be recorded on the old key after its installations were
read. All keys carry the organization's hash tag (a rotation keeps the organization).

KEYS[1]  the old key's snapshot hash (keys.keySnapshot)
KEYS[2]  the old key's installations hash (keys.installations)
KEYS[3]  the new key's installations hash

Each installation of the old key is set on the new key when the new key does not have it,
or has it only `pending` while the old key's status is an owner's decision (`approved` or
`blocked`): a decision beats a mere sighting, and the new key's own decisions (newer) win.
key-inherit-2.lua applies the same rule when the rotation starts. Then the old key's
snapshot and installations are deleted.

Returns the installations set on the new key as a flat array install, status, install,
status... (empty when there was nothing, e.g. when run a second time).
]]

local carried = redis.call('HGETALL', KEYS[2])
local set = {}
for i = 1, #carried, 2 do
  local install, status = carried[i], carried[i + 1]
  local current = redis.call('HGET', KEYS[3], install)
  if not current or (current == 'pending' and status ~= 'pending') then
    redis.call('HSET', KEYS[3], install, status)
    set[#set + 1] = install
    set[#set + 1] = status
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
return set
