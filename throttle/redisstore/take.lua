-- The server rule (throttle.ServerStore), atomically, for one or more decisions:
-- one command can carry a whole batch of callers' decisions, so Redis reads,
-- parses and answers one command per batch instead of one per decision.
-- KEYS[i]: decision i's state, a string of four little-endian doubles packed
--          with struct.pack: burst window start (microseconds), burst count,
--          sustain window start, sustain count. One GET and one SET with PX
--          per decision: cheaper for Redis than a hash's HMGET, HSET and
--          PEXPIRE.
-- ARGV[i]: decision i's arguments as five little-endian doubles
--       (struct.pack '<ddddd'): burst limit, sustain limit, align (0 first
--       request, 1 clock), peek (1: do not count), now (microseconds; SERVER: use
--       Redis TIME). Packed, a decision is one argument for Redis to read
--       instead of five numbers to parse.
-- Returns one string: per decision, 6 and then burstOver, sustainOver,
-- burstCount, sustainCount, burstResetUs, sustainResetUs, all
-- little-endian doubles (or its error: see frame in common.lua).
local function take(key, bl, sl, align, peek, now)
  if now == SERVER then now = redisNow() end
  local bs, bc, ss, sc = 0, 0, 0, 0
  local raw = redis.call('GET', key)
  if raw and #raw == 32 then -- anything else is not ours: start afresh
    bs, bc, ss, sc = struct.unpack('<dddd', raw)
  end
  local function roll(start, count, period)
    -- A request stamped before the window's start by less than a period
    -- (clocks read in the other order than the requests came) counts in
    -- it; one earlier still (a clock stepped back) opens a new window: see
    -- rollOne.
    if count > 0 and now < start + period and now >= start - period then
      return start, count
    end
    if align == 1 then
      return now - (now % period), 0
    end
    return now, 0
  end
  local bs0, ss0 = bs, ss
  bs, bc = roll(bs, bc, BP)
  ss, sc = roll(ss, sc, SP)
  local bover = (bl > 0 and bc >= bl) and 1 or 0
  local sover = (sl > 0 and sc >= sl) and 1 or 0
  if peek == 0 then
    bc, sc = bc + 1, sc + 1
    local state = struct.pack('<dddd', bs, bc, ss, sc)
    if raw and bs == bs0 and ss == ss0 then
      -- Neither window rolled, so the key's expiry, set when one last did,
      -- still outlives both: keeping it makes the write a third cheaper.
      redis.call('SET', key, state, 'KEEPTTL')
    else
      local ends = math.max(bs + BP, ss + SP)
      redis.call('SET', key, state, 'PX', math.floor((ends - now) / 1000) + 1000)
    end
  end
  -- Which window refused the request is throttle.Decide's to work out.
  return {bover, sover, bc, sc, bs + BP - now, ss + SP - now}
end

if #KEYS ~= #ARGV then
  return redis.error_reply('take: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' decisions')
end
local out = {}
for i = 1, #KEYS do
  if #ARGV[i] ~= 40 then
    return redis.error_reply('take: decision ' .. i .. ' has ' .. #ARGV[i] .. ' bytes of arguments, want 40')
  end
  local bl, sl, align, peek, now = struct.unpack('<ddddd', ARGV[i])
  out[i] = frame(pcall(take, KEYS[i], bl, sl, align, peek, now))
end
return table.concat(out)
