#!/usr/bin/env bash
# loopback-before-after.sh BASE [ROUNDS] [CONTENDERS]: BenchmarkLoopbackPaired
# (§1b of BENCHMARKS.md: CPU per call over real loopback HTTP, the
# contenders taking turns in blocks of 50 calls) built from the commit BASE
# and from the work tree, run in alternating rounds (which one goes first
# alternates too); then bench/summary's medians and ranges of each figure.
# CONTENDERS defaults to the bare calls with the same kinds of context as
# fgrl's two rows, and those rows; "all" runs the benchmark's own default
# set (the nine of run.sh's §1b). Lines are named
# LoopbackPaired/before and LoopbackPaired/after.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1
count=${2:-10}
arg=${3:-base-cancel,fgrl,base-deadline,fgrl-deadline}
contenders=$arg
[ "$contenders" != all ] || contenders=
. bench/before-after-lib.sh
build_both "$base"
printf '$ bash bench/loopback-before-after.sh %s %s %s   # before: %s, after: the work tree at %s%s\n' \
	"$base" "$count" "$arg" "$(git rev-parse --short "$base")" "$(git rev-parse --short HEAD)" "$(git diff --quiet HEAD -- transport bench || echo ' (with changes)')"
out=$tmp/out
one() { # one VERSION DIR
	(cd "$2/bench" && "$tmp/$1.test" -test.run '^$' -test.bench 'LoopbackPaired$' -test.benchtime 400x -test.count 1 \
		-contenders "$contenders") | sed "s|^BenchmarkLoopbackPaired|BenchmarkLoopbackPaired/$1|" | tee -a "$out"
}
for i in $(seq "$count"); do
	if [ $((i % 2)) -eq 1 ]; then one before "$tmp/before"; one after .; else one after .; one before "$tmp/before"; fi
done
printf -- '--- summary (median and range across rounds)\n'
grep '^Benchmark' "$out" | "$tmp/summary"
