--[[
installation-forget-1.lua: forgets installations of one key that are still `pending` in
Redis, leaving any the owner decided on (approved, blocked) since they were chosen. Run
before their PostgreSQL rows are deleted (shared/verify/stale-installations.ts): a call
that records one of them again meanwhile finds it unknown, records it pending afresh, and
its sighting keeps the row.

KEYS[1]  the key's installations hash (keys.installations)
ARGV     the installations to forget

Returns how many were removed.
]]

local removed = 0
for _, install in ipairs(ARGV) do
  if redis.call('HGET', KEYS[1], install) == 'pending' then
    redis.call('HDEL', KEYS[1], install)
    removed = removed + 1
  end
end
return removed
