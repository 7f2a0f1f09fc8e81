-- The client budget (throttle.Sliding), atomically, for one or more
-- decisions: one command can carry a whole batch of callers' operations.
-- KEYS, two per decision: a sorted set of admissions (score: the admission
-- time in microseconds; member: its id, a random number the caller chose, so
-- that ids do not repeat when Redis loses the key's state), then a hash with
-- the Retry-After block (blocked).
-- ARGV, one per decision in KEYS' order: its arguments A as little-endian
-- doubles (struct.pack '<d...'): op (1 reserve, 2 release, 3 block, 4 sync,
-- 5 snapshot), burst limit, sustain limit, margin (us), now (us; SERVER: Redis
-- TIME), then per op:
--   reserve: maxWait (us), id        -> {allowed, waitUs, blocked, id}
--   release: id                       -> {released} (0: none booked; a mark of the id is kept, see below)
--   block:   duration (us)            -> {}
--   sync:    period (us), used, reset (us), first id (ids first, first+1, ...) -> {}
--   snapshot:                         -> {burstCount, burstResetUs, sustainCount, sustainResetUs, blockedUs, waitUs}
-- Returns one string: per decision, the number of its values and then the
-- values, all little-endian doubles (or its error: see frame in common.lua).
local function budget(log, meta, A)
  local op = A[1]
  -- A limit over MaxLimit (100,000) is read as MaxLimit, as the memory
  -- store reads it: the log keeps no more admissions than that.
  local bl, sl, margin = math.min(tonumber(A[2]), 100000), math.min(tonumber(A[3]), 100000), tonumber(A[4])
  local now = tonumber(A[5])
  if now == SERVER then now = redisNow() end
  local cap = math.min(math.max(bl, sl, 1), 100000)

  -- Entries at or before this can no longer affect a decision.
  redis.call('ZREMRANGEBYSCORE', log, '-inf', now - SP - margin)

  -- largest notes this decision's limit as given to the key and returns
  -- the log size the largest limit given while the key lives needs (meta's
  -- cap), as the memory store's ring, which never shrinks, grows to it:
  -- callers sharing the key under other limits (transports of another
  -- LimitShare) need the admissions their own limits count. Called where an
  -- admission is added, whose expiry then covers meta too.
  local function largest()
    local kept = tonumber(redis.call('HGET', meta, 'cap')) or 0
    if cap > kept then
      redis.call('HSET', meta, 'cap', cap)
      kept = cap
    end
    return kept
  end

  -- keepNewest drops all but the newest admissions the largest limit
  -- counts.
  local function keepNewest(kept)
    redis.call('ZREMRANGEBYRANK', log, 0, -(kept + 1))
  end

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

  -- keep expires the keys after last, or later when they hold more (the
  -- newest admission, the block): a block or a sync never shortens them, nor
  -- expires them at once for an end in the past.
  local function keep(last)
    local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
    local blocked = tonumber(redis.call('HGET', meta, 'blocked')) or 0
    expire(math.max(last, now, blocked, tonumber(newest[2]) or 0))
  end

  -- An admission is a member named by its id, so that release finds it
  -- with one ZREM instead of a scan.
  local function add(at, id)
    redis.call('ZADD', log, at, string.format('%d', id))
  end

  -- The bound is formatted as an integer: concatenated, a number becomes
  -- 14 significant digits, and microseconds since 1970 have 16.
  local function count(span)
    return redis.call('ZCOUNT', log, string.format('(%d', now - span), '+inf')
  end

  -- A release that finds no admission of its id may have overtaken the
  -- reserve it undoes (a caller that left: redisstore's giveBack, on
  -- another connection); it leaves a mark of the id in meta, valued with
  -- Redis's clock, and a reserve with a marked id books nothing. A reserve
  -- arrives within seconds of its release or never (its own was refused,
  -- or lost on the way), so the newest marks are the ones of use: a release
  -- that finds meta full (1,024 fields) first sweeps marks older than
  -- markUs, then, if none was, the oldest mark. Meta expires as the log
  -- does, or after 60 s when it had no expiry.
  local markUs = 60000000
  local function mark(id)
    return 'r' .. string.format('%d', id)
  end

  if op == 1 then -- reserve
    local id = A[7] or error('budget: reserve needs an admission id')
    if redis.call('HDEL', meta, mark(id)) == 1 then
      return {0, 0, 0}
    end
    local at, blocked = earliest()
    if at - now > tonumber(A[6]) then
      return {0, at - now, blocked}
    end
    local wait = at - now
    -- An admission stamped before the newest (callers' clocks racing) is
    -- recorded as the newest, which can only make the budget stricter; the
    -- caller need not wait for the other's clock.
    local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
    if newest[2] then at = math.max(at, tonumber(newest[2])) end
    add(at, id)
    local kept = largest()
    if at > now and kept < 2 * cap and redis.call('ZCARD', log) > kept then
      -- A booking ahead into a full log stands in for the oldest admission
      -- it would push out only while it is held: from then on the log
      -- keeps twice the largest limit, so that a release of it leaves the
      -- calls sent (the memory store's ring grows likewise).
      kept = 2 * cap
      redis.call('HSET', meta, 'cap', kept)
    end
    keepNewest(kept)
    expire(at)
    return {1, wait, 0, id}
  elseif op == 2 then -- release
    local t = redisNow() -- a mark's time, whatever now the caller gave
    local released = redis.call('ZREM', log, string.format('%d', A[6]))
    if released == 0 then
      if redis.call('HLEN', meta) >= 1024 then
        local fields = redis.call('HGETALL', meta)
        local oldest, oldestAt, swept = nil, nil, false
        for i = 1, #fields, 2 do
          if string.sub(fields[i], 1, 1) == 'r' then
            local at = tonumber(fields[i + 1]) or 0
            if at < t - markUs then
              redis.call('HDEL', meta, fields[i])
              swept = true
            elseif not oldest or at < oldestAt then
              oldest, oldestAt = fields[i], at
            end
          end
        end
        if not swept and oldest then redis.call('HDEL', meta, oldest) end
      end
      redis.call('HSET', meta, mark(A[6]), t)
      if redis.call('PTTL', meta) < 0 then redis.call('PEXPIRE', meta, 60000) end
    end
    return {released}
  elseif op == 3 then -- block
    local till = now + tonumber(A[6])
    local blocked = tonumber(redis.call('HGET', meta, 'blocked')) or 0
    if till > blocked then redis.call('HSET', meta, 'blocked', till) end
    keep(till)
    return {}
  elseif op == 4 then -- sync
    local period, used, reset = tonumber(A[6]), tonumber(A[7]), tonumber(A[8])
    local first = A[9] or error('budget: sync needs a first admission id')
    if reset <= 0 or reset > period then return {} end
    local start = now + reset - period
    -- Admissions a second before start on (servers round reset up) and
    -- sent by now (not one booked ahead) are already in used.
    local missing = used - redis.call('ZCOUNT', log, string.format('(%d', start - 1000000 - 1), string.format('%d', now))
    if missing > 0 then
      local kept = largest()
      for i = 1, math.min(missing, kept) do add(start, first + i - 1) end
      keepNewest(kept)
      keep(now)
    end
    return {}
  elseif op == 5 then -- snapshot
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
  error('budget: unknown op ' .. op)
end

local out = {}
for i = 1, #ARGV do
  local n = #ARGV[i] / 8
  if n < 5 or n ~= math.floor(n) or #KEYS ~= 2 * #ARGV then
    return redis.error_reply('budget: decision ' .. i .. ' has ' .. #ARGV[i] .. ' bytes of arguments and ' .. #KEYS .. ' keys in all')
  end
  local A = {struct.unpack('<' .. string.rep('d', n), ARGV[i])}
  A[#A] = nil -- unpack's last value is where it stopped
  out[i] = frame(pcall(budget, KEYS[2 * i - 1], KEYS[2 * i], A))
end
return table.concat(out)
