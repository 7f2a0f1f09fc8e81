-- wrk script for bench/run.sh: each request carries one of the tokens in
-- bench/tokens.txt (many users, so the mock admits nearly every request)
-- and the profile service's host name.
local tokens = {}
for line in io.lines("bench/tokens.txt") do tokens[#tokens + 1] = line end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/users/me/profile/settings?settings=Gamertag",
    { ["Host"] = "profile.xboxlive.com", ["Authorization"] = tokens[(n % #tokens) + 1] })
end
