-- The server rule (throttle.Windows) for one key, atomically.
-- KEYS[1]: a hash with the window starts (bs, ss, microseconds) and counts (bc, sc).
-- ARGV: burst limit, sustain limit, align (0 first request, 1 clock),
--       peek (1: do not count), now (microseconds; 0: use Redis TIME).
-- Returns {burstOver, sustainOver, burstCount, sustainCount, burstResetUs, sustainResetUs}.
local bl, sl, align, peek = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = tonumber(ARGV[5])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local BP, SP = 15000000, 300000000
local v = redis.call('HMGET', KEYS[1], 'bs', 'bc', 'ss', 'sc')
local bs, bc = tonumber(v[1]) or 0, tonumber(v[2]) or 0
local ss, sc = tonumber(v[3]) or 0, tonumber(v[4]) or 0
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
  redis.call('HSET', KEYS[1], 'bs', bs, 'bc', bc, 'ss', ss, 'sc', sc)
  local ends = math.max(bs + BP, ss + SP)
  redis.call('PEXPIRE', KEYS[1], math.floor((ends - now) / 1000) + 1000)
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
