# before-after-lib.sh, sourced by the bench/*-before-after.sh scripts that
# compare test binaries of this module's bench package: build_both BASE
# builds bench's test binary from the commit BASE ($tmp/before.test, its
# tree in $tmp/before) and from the work tree ($tmp/after.test), and
# bench/summary ($tmp/summary), in a temporary directory $tmp removed on
# exit. The caller is in the repository's root.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build_both() {
	mkdir "$tmp/before"
	git archive "$1" | tar -x -C "$tmp/before"
	(cd "$tmp/before/bench" && go test -c -o "$tmp/before.test" .)
	(cd bench && go test -c -o "$tmp/after.test" .)
	(cd bench && go build -o "$tmp/summary" ./summary)
}
