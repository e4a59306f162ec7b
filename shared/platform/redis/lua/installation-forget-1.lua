--[[
installation-forget-1.lua: forgets installations of one key that are still `pending` in
Redis, leaving any the owner decided on (approved, blocked) since they were chosen. Run
after their PostgreSQL rows were deleted (shared/verify/stale-installations.ts): a call that
sights one of them meanwhile writes its row back, and once forgotten here it is recorded
again as a new installation by its next call.

The hash is never emptied: the counting script approves the first installation of a key
whose hash is empty, so an empty hash would hand the next stranger's name the site's place.
The last field stays (a hash of only pending names is a key whose approved installation was
lost; the projector restores it from PostgreSQL).

KEYS[1]  the key's installations hash (keys.installations)
ARGV     the installations to forget

Returns how many were removed.
]]

local removed = 0
for _, install in ipairs(ARGV) do
  if redis.call('HGET', KEYS[1], install) == 'pending' and redis.call('HLEN', KEYS[1]) > 1 then
    redis.call('HDEL', KEYS[1], install)
    removed = removed + 1
  end
end
return removed
