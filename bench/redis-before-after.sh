#!/usr/bin/env bash
# redis-before-after.sh BASE [ROUNDS]: BenchmarkRedisClients (§4 of
# BENCHMARKS.md: the store, go-redis and rueidis running the store's script,
# from 1 and from 256 callers, -cpu 1) built from the commit BASE and from
# the work tree, run in alternating rounds (which one goes first alternates
# too), each on a redis-server of its own; then bench/summary's medians and
# ranges, and the ratios round by round. Lines are named
# RedisClients/before/... and RedisClients/after/....
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1
count=${2:-6}
. bench/before-after-lib.sh
build_both "$base"
printf '$ bash bench/redis-before-after.sh %s %s   # before: %s, after: the work tree at %s%s\n' \
	"$base" "$count" "$(git rev-parse --short "$base")" "$(git rev-parse --short HEAD)" "$(git diff --quiet HEAD -- throttle bench || echo ' (with changes)')"
out=$tmp/out
one() { # one VERSION DIR
	(cd "$2/bench" && "$tmp/$1.test" -test.run '^$' -test.bench 'RedisClients/callers=(1|256)/(store|go-redis|rueidis)$' \
		-test.benchtime 60000x -test.cpu 1 -test.count 1) | sed "s|^BenchmarkRedisClients/|BenchmarkRedisClients/$1/|" | tee -a "$out"
}
for i in $(seq "$count"); do
	if [ $((i % 2)) -eq 1 ]; then one before "$tmp/before"; one after .; else one after .; one before "$tmp/before"; fi
done
printf -- '--- summary (median and range across rounds)\n'
r() { printf -- "-ratio\nRedisClients/%s/callers=%s/%s RedisClients/%s/callers=%s/%s ops/s\n" "$@"; }
mapfile -t ratios < <(
	r after 1 store after 1 go-redis; r before 1 store before 1 go-redis
	r after 256 store after 256 rueidis; r before 256 store before 256 rueidis
	r after 1 store before 1 store; r after 256 store before 256 store)
grep '^Benchmark' "$out" | "$tmp/summary" "${ratios[@]}"
