--[[
challenge-set-n.lua: stores the bot-check challenges issued in one event-loop turn
(ingress/routes/botcheck/challenges.ts), each exactly as `SET key record EX ttl NX`: one
command for the turn instead of one per new visitor. Single server only: on a Redis
Cluster the nonces' keys fall in many slots, and each challenge is a SET of its own.

KEYS[i]      a challenge's key (keys.challenge(nonce))
ARGV[2i-1]   its record (JSON, shared/botcheck/nonce.ts serializeChallenge)
ARGV[2i]     its expiry, seconds

Returns an array: 1 where the record was stored, 0 where the key existed (left untouched).
]]
local stored = {}
for i = 1, #KEYS do
  if redis.call("SET", KEYS[i], ARGV[2 * i - 1], "EX", ARGV[2 * i], "NX") then
    stored[i] = 1
  else
    stored[i] = 0
  end
end
return stored
