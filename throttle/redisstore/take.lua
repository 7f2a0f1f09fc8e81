-- The server rule (throttle.Windows) for one key, atomically.
-- KEYS[1]: a string of four little-endian doubles, packed with struct.pack:
--          burst window start (microseconds), burst count, sustain window
--          start, sustain count. One GET and one SET with PX per decision:
--          cheaper for Redis than a hash's HMGET, HSET and PEXPIRE.
-- ARGV: burst limit, sustain limit, align (0 first request, 1 clock),
--       peek (1: do not count), now (microseconds; 0: use Redis TIME).
-- Returns {burstOver, sustainOver, burstCount, sustainCount, burstResetUs, sustainResetUs, limiter}.
local bl, sl, align, peek = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = tonumber(ARGV[5])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local BP, SP = 15000000, 300000000
local bs, bc, ss, sc = 0, 0, 0, 0
local raw = redis.call('GET', KEYS[1])
if raw and #raw == 32 then -- anything else is not ours: start afresh
  bs, bc, ss, sc = struct.unpack('<dddd', raw)
end
local function roll(start, count, period)
  if count > 0 and now >= start and now < start + period then
    return start, count
  end
  if align == 1 then
    return now - (now % period), 0
  end
  return now, 0
end
bs, bc = roll(bs, bc, BP)
ss, sc = roll(ss, sc, SP)
local bover = (bl > 0 and bc >= bl) and 1 or 0
local sover = (sl > 0 and sc >= sl) and 1 or 0
if peek == 0 then
  bc, sc = bc + 1, sc + 1
  local ends = math.max(bs + BP, ss + SP)
  redis.call('SET', KEYS[1], struct.pack('<dddd', bs, bc, ss, sc), 'PX', math.floor((ends - now) / 1000) + 1000)
end
-- The limiter: the window that refused the request; when both did, the
-- one that ends last (throttle.Windows decides the same).
local breset, sreset = bs + BP - now, ss + SP - now
local limiter = 0
if bover == 1 and (sover == 0 or breset > sreset) then
  limiter = 1
elseif sover == 1 then
  limiter = 2
end
return {bover, sover, bc, sc, breset, sreset, limiter}
