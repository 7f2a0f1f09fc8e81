#!/usr/bin/env bash
# mock-before-after.sh BASE [ROUNDS]: §3b of BENCHMARKS.md (xblcall mock
# under wrk -t1 -c32 -d5s, 1,000 users' tokens, limits no run reaches)
# for the mock built from the commit BASE and from the work tree, beside
# bench/bare, in alternating rounds (the order rotates); then
# bench/summary's medians and ranges and the ratios round by round. Lines
# are BenchmarkWrk/bare, BenchmarkWrk/before and BenchmarkWrk/after. Needs
# wrk and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1
count=${2:-4}
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp" bench/tokens.txt' EXIT
mkdir "$tmp/before"
git archive "$base" | tar -x -C "$tmp/before"
(cd "$tmp/before" && go build -o "$tmp/xblcall-before" ./cmd/xblcall)
go build -o "$tmp/xblcall-after" ./cmd/xblcall
(cd bench && go build -o "$tmp/bare" ./bare && go build -o "$tmp/summary" ./summary)
printf '$ bash bench/mock-before-after.sh %s %s   # before: %s, after: the work tree at %s%s\n' \
	"$base" "$count" "$(git rev-parse --short "$base")" "$(git rev-parse --short HEAD)" "$(git diff --quiet HEAD -- mock cmd || echo ' (with changes)')"
for i in $(seq 1000); do "$tmp/xblcall-after" token --xuid $((2533274790000000 + i)) --title 1234567890; done >bench/tokens.txt
echo '{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}' >"$tmp/limits.json"
"$tmp/xblcall-before" mock --addr 127.0.0.1:18091 --log-format off --limits "$tmp/limits.json" >/dev/null 2>&1 &
pids+=($!)
"$tmp/xblcall-after" mock --addr 127.0.0.1:18093 --log-format off --limits "$tmp/limits.json" >/dev/null 2>&1 &
pids+=($!)
sleep 1
size=$(curl -s -H 'Host: profile.xboxlive.com' -H "Authorization: $(head -1 bench/tokens.txt)" \
	'http://127.0.0.1:18093/users/me/profile/settings?settings=Gamertag' | wc -c)
"$tmp/bare" -addr 127.0.0.1:18092 -size "$size" &
pids+=($!)
sleep 1
rps() { wrk -t1 -c32 -d5s -s bench/wrk-tokens.lua "http://127.0.0.1:$1" | awk '/Requests\/sec/ {print $2}'; }
names=(before bare after)
ports=(18091 18092 18093)
out=$(for i in $(seq "$count"); do
	for k in 0 1 2; do
		j=$(((i + k) % 3))
		printf 'BenchmarkWrk/%s 1 %s req/s\n' "${names[$j]}" "$(rps "${ports[$j]}")"
	done
done)
printf '%s\n--- summary (median and range across rounds)\n' "$out"
printf '%s\n' "$out" | "$tmp/summary" -ratio 'Wrk/before Wrk/bare req/s' -ratio 'Wrk/after Wrk/bare req/s' -ratio 'Wrk/after Wrk/before req/s'
