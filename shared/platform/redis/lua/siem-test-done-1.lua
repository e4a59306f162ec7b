--[[
siem-test-done-1.lua: gives back one outstanding "send test event" request of an
organization (siem-test-admit-1.lua admitted it): a pusher handled it, whatever the outcome.

KEYS[1]  the organization's count of outstanding test requests (keys.siemTestsOutstanding)

Never below zero: a count that ran out (its lifetime), or a request nobody counted (published
by an ingress of the release before the cap), leaves nothing to give back. The key goes at
zero; a count above keeps its lifetime.

Returns the count afterwards.
]]

local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count <= 1 then
  redis.call('DEL', KEYS[1])
  return 0
end
return redis.call('DECR', KEYS[1])
