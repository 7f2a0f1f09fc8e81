#!/usr/bin/env bash
# Runs every benchmark fgrl publishes in BENCHMARKS.md, each side by side with
# its baseline in the same run. Usage: bash bench/run.sh [count [section...]],
# for example "bash bench/run.sh 5 1 1c" for sections 1 and 1c only.
# Needs wrk (section 3b) and redis-server and redis-benchmark (section 4).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-3}
shift || true
only=" $* "
# want NAME: whether the section NAME ("1b. ...") was asked for.
want() { [ "$only" = "  " ] || [[ "$only" == *" ${1%%.*} "* ]]; }

section() { printf '\n### %s\n$ %s\n' "$1" "$2"; }
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
(cd bench && go build -o "$summary" ./summary)
# rounds CMD...: runs CMD $count times, so that the benchmarks of one
# command alternate round by round (go test -count N runs each benchmark N
# times in a row, which puts a slow minute of a shared machine on one side).
rounds() {
	local rc=0
	for _ in $(seq "$count"); do "$@" || rc=$?; done
	return "$rc"
}
# failed FAILED_RC OUTPUT: says that a section's command failed and how its
# output ends, so that no section is dropped without a word; the script then
# exits 1 at its end.
failures=0
failed() {
	printf 'FAILED (exit %d); the output ends:\n%s\n' "$1" "$(tail -n 20 <<<"$2")"
	failures=$((failures + 1))
}
# report LINES [summary flags...]: the raw lines, then, when they hold
# benchmark results, each one's median and range across rounds and the
# ratios asked for.
report() {
	local out=$1
	shift
	printf '%s\n' "$out"
	grep -q '^Benchmark' <<<"$out" || return 0
	printf -- '--- summary (median and range across rounds)\n'
	printf '%s\n' "$out" | "$summary" "$@"
}
# run NAME COMMAND [summary flags...]: a section from a command's output.
run() {
	local name=$1 cmd=$2
	shift 2
	want "$name" || return 0
	section "$name" "$cmd"
	local out rc=0
	out=$( (eval "$cmd") 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || failed "$rc" "$out"
	report "$(grep -E '^(Benchmark|goos|goarch|cpu|pkg)|delivered|worked example' <<<"$out" || true)" "$@"
}
# profile NAME DIR BENCH PATTERN: a CPU profile of one benchmark, as pprof
# -top -cum prints it, kept to the lines matching PATTERN: where the time of
# a missed target goes (BENCHMARKS.md quotes these lines).
profile() {
	local name=$1 dir=$2 bench=$3 pattern=$4 tmp
	want "$name" || return 0
	tmp=$(mktemp -d)
	section "$name" "cd $dir && go test -run '^\$' -bench '$bench' -benchtime 5s -count 1 -cpuprofile cpu.out && go tool pprof -top -cum"
	local out rc=0
	out=$(cd "$dir" && go test -run '^$' -bench "$bench" -benchtime 5s -count 1 -cpuprofile "$tmp/cpu.out" -o "$tmp/b.test" . 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		failed "$rc" "$out"
	else
		grep -E '^Benchmark' <<<"$out" || true
		go tool pprof -top -cum -nodecount 200 "$tmp/b.test" "$tmp/cpu.out" 2>/dev/null | grep -E "flat%|$pattern" || true
	fi
	rm -rf "$tmp"
}
# wrk_mock: section 3b, xblcall mock and bench/bare each loaded with wrk,
# alternately, as benchmark lines for report.
wrk_mock() {
	local name="3b. mock vs a bare net/http handler under wrk (-t1 -c32, 5 s, alternating rounds)" tmp size mockpid barepid out
	want "$name" || return 0
	if ! command -v wrk >/dev/null; then
		printf '\n### 3b. skipped: wrk not on PATH (apt-get install wrk)\n'
		return 0
	fi
	section "$name" "wrk -t1 -c32 -d5s -s bench/wrk-tokens.lua URL"
	tmp=$(mktemp -d)
	go build -o "$tmp/xblcall" ./cmd/xblcall
	(cd bench && go build -o "$tmp/bare" ./bare)
	for i in $(seq 1000); do "$tmp/xblcall" token --xuid $((2533274790000000 + i)) --title 1234567890; done >bench/tokens.txt
	# limits no run reaches, so every answer is an admitted request's
	echo '{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}' >"$tmp/limits.json"
	"$tmp/xblcall" mock --addr 127.0.0.1:18081 --log-format off --limits "$tmp/limits.json" >/dev/null 2>&1 &
	mockpid=$!
	sleep 1
	size=$(curl -s -H 'Host: profile.xboxlive.com' -H "Authorization: $(head -1 bench/tokens.txt)" \
		'http://127.0.0.1:18081/users/me/profile/settings?settings=Gamertag' | wc -c)
	"$tmp/bare" -addr 127.0.0.1:18082 -size "$size" &
	barepid=$!
	sleep 1
	rps() { wrk -t1 -c32 -d5s -s bench/wrk-tokens.lua "$1" | awk '/Requests\/sec/ {print $2}'; }
	out=$(for _ in $(seq "$count"); do
		printf 'BenchmarkWrk/bare 1 %s req/s\n' "$(rps http://127.0.0.1:18082)"
		printf 'BenchmarkWrk/mock 1 %s req/s\n' "$(rps http://127.0.0.1:18081)"
	done)
	kill "$mockpid" "$barepid"
	rm -rf "$tmp" bench/tokens.txt
	report "$out" -ratio 'Wrk/mock Wrk/bare req/s'
}

echo "# fgrl benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), $(go version), $(nproc) cores"
run "1. transport overhead vs the bare base and go-retryablehttp" \
	"cd bench && rounds go test -run '^\$' -bench NoRetry -benchtime 200000x -count 1 ." \
	-overhead 'NoRetry/base NoRetry/fgrl NoRetry/retryablehttp' -overhead 'NoRetry/base NoRetry/fgrl-deadline NoRetry/retryablehttp'
run "1b. the same over real loopback HTTP (net/http server, http.Transport base): goroutines and allocations per call, then the overheads with the contenders taking turns in blocks of 50 calls" \
	"cd bench && rounds go test -run '^\$' -bench 'Loopback\$' -benchtime 20000x -count 1 . && rounds go test -run '^\$' -bench LoopbackPaired -benchtime 400x -count 1 ."
profile "1c. where fgrl's overhead goes without a deadline (CPU profile of NoRetry/fgrl; cum% of the whole run)" bench 'NoRetry/fgrl$' \
	'transport\.\(\*Transport\)\.RoundTrip$|transport\.\(\*call\)\.(init|gate|send|finish)$|transport\.newAttempt$|context\.WithCancelCause$|time\.AfterFunc$|throttle\.\(\*Budget\)\.Reserve$|limits\.\(\*Limits\)\.Match$|xblauth\.Parse$|bench\.okBase\.RoundTrip$|runtime\.mallocgc$|runtime\.gcBgMarkWorker$'
run "1d. fgrl in process with the caches evicted before each call (256 KiB written), as a round trip through the kernel leaves them" \
	"cd bench && rounds go test -run '^\$' -bench ColdCall -benchtime 100000x -count 1 ."
run "2. throttle decisions: hot key, parallel over many keys (-cpu 1,2), bytes per key" \
	"go test -run '^\$' -bench 'ServerTake|BudgetReserve|Match|ServerMemory|BudgetMemory' -cpu 1,2 -count $count ./throttle ./limits"
run "3. mock: ServeHTTP, and loopback throughput vs a bare net/http handler" \
	"rounds go test -run '^\$' -bench 'ServeHTTP|Loopback' -count 1 ./mock" \
	-ratio 'Loopback/bare Loopback/mock ns/op'
wrk_mock
profile "3c. where the mock's time goes (CPU profile of the in-process Loopback/mock: client and server; net/http's conn.serve is the whole server side)" mock 'Loopback/mock$' \
	'net/http\.\(\*conn\)\.serve$|net/http\.\(\*conn\)\.readRequest$|net/http\.\(\*response\)\.finishRequest$|mock\.\(\*Handler\)\.(serve|count|record|authenticate)$|mock\.profileService\.serveProfile$|mock\.(writeJSON|writeRaw|parseToken|newCall)$|mock\.\(\*journal\)\.add$|encoding/json\.Marshal$|ratelimit\.SetHeaders$|throttle\.\(\*MemoryServerStore\)\.Take$|limits\.\(\*Limits\)\.Match$|runtime\.gcBgMarkWorker$'
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	run "4. Redis: the store, go-redis and rueidis running the store's script, and redis-benchmark's trivial EVALSHA, from 1 and from 256 callers, alternating rounds (-cpu 1: the client gets one core, Redis the other)" \
		"cd bench && rounds go test -run '^\$' -bench RedisClients -benchtime 60000x -cpu 1 -count 1 . && cd .. && go test -run '^\$' -bench Reserve -benchtime 3s -cpu 1 -count $count ./throttle/redisstore" \
		-ratio 'RedisClients/callers=256/store RedisClients/callers=256/go-redis ops/s' -ratio 'RedisClients/callers=1/store RedisClients/callers=1/go-redis ops/s' \
		-ratio 'RedisClients/callers=256/store RedisClients/callers=256/rb-trivial ops/s' -ratio 'RedisClients/callers=256/rueidis RedisClients/callers=256/store ops/s' \
		-ratio 'RedisClients/callers=256/store RedisClients/callers=256/rueidis ops/s'
elif want "4."; then
	printf '\n### 4. skipped: redis-server / redis-benchmark not on PATH\n'
fi
run "5. goodput under over-demand, 30 virtual minutes, one transport and a fleet of four on Redis (and the documented example)" \
	"go test -run 'TestGoodput|TestFleetGoodputRedis|TestWorkedExampleThroughTransport' -v -count 1 ./transport"
run "6. how cost grows with distinct users" \
	"go test -run '^\$' -bench 'BenchmarkUsers' -count 1 ./transport && go test -run '^\$' -bench MemoryUsers -benchtime 1x -count 1 ./mock"
run "7. trace analysis: a generated 2,000,000-entry HAR (about 1.4 GB on disk while it runs)" \
	"FGRL_BENCH_HAR_ENTRIES=2000000 go test -run '^\$' -bench 'AnalyzeHAR|ReadHAR' -benchtime 1x -count $count ./analyze"
run "7b. what-if replay (xblcall analyze --what-if) of generated traces of 100,000, 500,000 and 2,000,000 calls, each in a process of its own, sizes alternating round by round" \
	"cd bench && go run ./whatifscale -rounds $count -trace polling,bursts -calls 100000,500000,2000000"
run "8. observability cost: no hook, the no-op meter provider, the SDK with a span per call" \
	"rounds go test -run '^\$' -bench Observe -benchtime 20000x -count 1 ./fgrlotel"
run "9. the proxy: a call through xblcall proxy's server (CONNECT, TLS to its CA, its transport) beside the same call through the transport in-process, to one loopback server, taking turns in blocks of 50 calls" \
	"cd bench && rounds go test -run '^\$' -bench 'Proxy' -benchtime 400x -count 1 ." \
	-ratio 'Proxy/proxy Proxy/direct B/op' -ratio 'Proxy/proxy Proxy/direct allocs/op'
if [ "$failures" -gt 0 ]; then
	printf '\n%d section(s) FAILED: see FAILED above\n' "$failures"
	exit 1
fi
