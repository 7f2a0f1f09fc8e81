-- The learned limits in force (throttle.LimitStore.Learned).
-- KEYS[1]: the hash of learned records (see learn.lua). ARGV[1]: now (us;
-- SERVER: Redis TIME). Returns {field, limit, untilUs, ...} of the limits in
-- force at now.
local now = tonumber(ARGV[1])
if now == SERVER then now = redisNow() end
local out = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local l, u = string.match(all[i + 1], '^(%-?%d+):(%-?%d+):')
  if l and tonumber(l) ~= 0 and now < tonumber(u) then
    out[#out + 1] = all[i]
    out[#out + 1] = l
    out[#out + 1] = u
  end
end
return out
