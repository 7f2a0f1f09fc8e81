-- The client budget (throttle.Sliding) for one key, atomically.
-- KEYS[1]: a sorted set of admission times (microseconds); KEYS[2]: a hash
-- with the Retry-After block (blocked) and a member counter (seq).
-- ARGV: op, burst limit, sustain limit, margin (us), now (us; 0: Redis TIME), then per op:
--   reserve: maxWait (us)             -> {allowed, waitUs, blocked, seq}
--   release: seq                      -> {released}
--   block:   duration (us)            -> {}
--   sync:    period (us), used, reset (us) -> {}
--   snapshot:                         -> {burstCount, burstResetUs, sustainCount, sustainResetUs, blockedUs, waitUs}
local op = ARGV[1]
local bl, sl, margin = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = tonumber(ARGV[5])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local BP, SP = 15000000, 300000000
local cap = math.min(math.max(bl, sl, 1), 100000)
local log, meta = KEYS[1], KEYS[2]

-- Entries at or before this can no longer affect a decision.
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - SP - margin)
redis.call('ZREMRANGEBYRANK', log, 0, -(cap + 1))

local function kth(k) -- the k-th most recent admission
  local r = redis.call('ZRANGE', log, -k, -k, 'WITHSCORES')
  return tonumber(r[2])
end

local function earliest()
  local n = redis.call('ZCARD', log)
  local at = now
  if bl > 0 and n >= bl then at = math.max(at, kth(bl) + BP + margin) end
  if sl > 0 and n >= sl then at = math.max(at, kth(sl) + SP + margin) end
  local blocked = tonumber(redis.call('HGET', meta, 'blocked')) or 0
  if blocked > at then return blocked, 1 end
  return at, 0
end

local function expire(last)
  local ms = math.floor((last + SP + margin - now) / 1000) + 1000
  redis.call('PEXPIRE', log, ms)
  redis.call('PEXPIRE', meta, ms)
end

local function add(at)
  local seq = redis.call('HINCRBY', meta, 'seq', 1)
  redis.call('ZADD', log, at, at .. ':' .. seq)
  return seq
end

local function count(span)
  return redis.call('ZCOUNT', log, '(' .. (now - span), '+inf')
end

if op == 'reserve' then
  local at, blocked = earliest()
  if at - now > tonumber(ARGV[6]) then
    return {0, at - now, blocked}
  end
  local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
  if newest[2] then at = math.max(at, tonumber(newest[2])) end
  local seq = add(at)
  redis.call('ZREMRANGEBYRANK', log, 0, -(cap + 1))
  expire(at)
  return {1, at - now, 0, seq}
elseif op == 'release' then
  local suffix = ':' .. ARGV[6]
  for _, m in ipairs(redis.call('ZRANGE', log, 0, -1)) do
    if string.sub(m, -#suffix) == suffix then
      redis.call('ZREM', log, m)
      return {1}
    end
  end
  return {0}
elseif op == 'block' then
  local till = now + tonumber(ARGV[6])
  local blocked = tonumber(redis.call('HGET', meta, 'blocked')) or 0
  if till > blocked then redis.call('HSET', meta, 'blocked', till) end
  expire(math.max(till, blocked))
  return {}
elseif op == 'sync' then
  local period, used, reset = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
  if period <= 0 or used <= 0 or reset <= 0 or reset > period then return {} end
  local start = now + reset - period
  local missing = math.min(used - count(now - start + 1000000 + 1), cap)
  for i = 1, missing do add(start) end
  redis.call('ZREMRANGEBYRANK', log, 0, -(cap + 1))
  if missing > 0 then expire(now) end
  return {}
elseif op == 'snapshot' then
  local function window(span)
    local c = count(span)
    if c == 0 then return 0, 0 end
    return c, kth(c) + span - now
  end
  local bc, br = window(BP + margin)
  local sc, sr = window(SP + margin)
  local blocked = tonumber(redis.call('HGET', meta, 'blocked')) or 0
  local at = earliest()
  return {bc, br, sc, sr, math.max(blocked - now, 0), at - now}
end
return redis.error_reply('unknown op ' .. op)
