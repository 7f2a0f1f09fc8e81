-- Shared by take.lua and reserve.lua: the store puts this file before each
-- of them, so both read the clock and frame their answers the same way.

-- The FGRL periods in microseconds: burst and sustain.
local BP, SP = 15000000, 300000000

-- SERVER is the now that means "Redis's clock" (the store without
-- CallerTime): 2^62 microseconds before 1970, which no caller's time is
-- sent as (redisstore.go: serverTime), where 0 is the Unix epoch, a time
-- a simulation may start at.
local SERVER = -4611686018427387904

-- redisNow is Redis's clock in microseconds, read once per script run.
local clock
local function redisNow()
  if not clock then
    local t = redis.call('TIME')
    clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return clock
end

-- frame packs one decision's outcome: the number of its values and the
-- values; or, when it failed, minus the length of its error message, then
-- the message padded to whole doubles. A decision that fails (a key of
-- another type: WRONGTYPE) fails alone, not the batch it came in.
local function frame(ok, r)
  if ok then
    return struct.pack('<d' .. string.rep('d', #r), #r, unpack(r))
  end
  local msg = type(r) == 'table' and tostring(r.err) or tostring(r)
  return struct.pack('<d', -#msg) .. msg .. string.rep('\0', (8 - #msg % 8) % 8)
end
