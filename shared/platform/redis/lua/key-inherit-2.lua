--[[
key-inherit-2.lua: gives a key that replaces another (a rotation with a grace period) the
installations the old key has in Redis, before the new key's index is written, so the new
key never refuses the site's own installation as a second one. The old key goes on
working, and recording, until its grace ends; key-retire-3.lua then hands over what it
recorded meanwhile. Both keys carry the organization's hash tag.

KEYS[1]  the old key's installations hash (keys.installations)
KEYS[2]  the new key's installations hash

Each installation of the old key is set on the new key when the new key does not have it,
or has it only `pending` while the old key's status is an owner's decision (`approved` or
`blocked`): the rule of key-retire-3.lua. Nothing is deleted; running it again changes
nothing the first run did not.

Returns the installations set on the new key as a flat array install, status, ...
]]

local carried = redis.call('HGETALL', KEYS[1])
local set = {}
for i = 1, #carried, 2 do
  local install, status = carried[i], carried[i + 1]
  local current = redis.call('HGET', KEYS[2], install)
  if not current or (current == 'pending' and status ~= 'pending') then
    redis.call('HSET', KEYS[2], install, status)
    set[#set + 1] = install
    set[#set + 1] = status
  end
end
return set
