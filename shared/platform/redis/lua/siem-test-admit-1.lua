--[[
siem-test-admit-1.lua: admits one more "send test event" request of an organization, unless
it has as many outstanding as it may (shared/events/siem-stream.ts). The admin route runs it
before it publishes the request; the pusher takes the request back with siem-test-done-1.lua
once it has handled it. Not when the route stops waiting (504): the request is still on the
stream, and a pusher still sends it.

KEYS[1]  the organization's count of outstanding test requests (keys.siemTestsOutstanding)

ARGV[1]  the most it may have outstanding
ARGV[2]  the count's lifetime after this admission, milliseconds: the safety net for a request
         never given back (admitted by an ingress that crashed before publishing it, dropped
         unhandled by a pusher that died holding it). Every admission starts it again, so it
         runs out only that long after the organization's last admitted request.

Returns the count after this request (1 to ARGV[1]), or 0 when it is refused (at the cap).
]]

local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then return 0 end
count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return count
