-- The learned-limits rule (throttle.LimitStore.Learn), atomically: one
-- report of the limit a service applied to one window of a scope.
-- KEYS[1]: the hash of learned records; field "b:" or "s:" + scope; value
-- "limit:untilUs:cand:candAtUs:candUser" (limit in force until untilUs, 0
-- for none; the candidate waiting to be confirmed, 0 for none).
-- ARGV: field, limit, user, now (us; SERVER: Redis TIME), period (us),
-- learnedFor (us), most fields.
-- Returns {limit in force, its end (us)}; {0, 0} when none.
local field, limit, user = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now = tonumber(ARGV[4])
if now == SERVER then now = redisNow() end
local period, lasts, most = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])

-- parse reads a record, dropping what has lasted its time at now.
local function parse(v)
  local r = {l = 0, u = 0, c = 0, ca = 0, cu = ''}
  if v then
    local l, u, c, ca, cu = string.match(v, '^(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(.*)$')
    if l then r = {l = tonumber(l), u = tonumber(u), c = tonumber(c), ca = tonumber(ca), cu = cu} end
  end
  if r.l ~= 0 and now >= r.u then r.l, r.u = 0, 0 end
  if r.c ~= 0 and now >= r.ca + lasts then r.c, r.ca, r.cu = 0, 0, '' end
  return r
end

local old = redis.call('HGET', KEYS[1], field)
if not old and redis.call('HLEN', KEYS[1]) >= most then
  -- Full: drop the records that hold nothing any more, then look again.
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local r = parse(all[i + 1])
    if r.l == 0 and r.c == 0 then redis.call('HDEL', KEYS[1], all[i]) end
  end
  if redis.call('HLEN', KEYS[1]) >= most then return {0, 0} end
end

local r = parse(old)
if r.l == limit then
  r.u = math.max(r.u, now + lasts)
elseif r.c == limit and (r.cu ~= user or now - r.ca >= period) then
  r.l, r.u, r.c, r.ca, r.cu = limit, now + lasts, 0, 0, ''
elseif r.c == limit then
  -- the same key's again, in the candidate's window: nothing new
else
  r.c, r.ca, r.cu = limit, now, user
end
redis.call('HSET', KEYS[1], field, string.format('%d:%d:%d:%d:%s', r.l, r.u, r.c, r.ca, r.cu))
-- Every record lasts at most learnedFor from its last report: so does the hash.
redis.call('PEXPIRE', KEYS[1], math.floor(lasts / 1000) + 60000)
return {r.l, r.u}
