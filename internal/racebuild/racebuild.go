// Package racebuild tells a test whether it runs under the race
// detector, and skips there the tests the detector's build changes or
// slows without finding anything: stack and heap sizes (its
// instrumentation makes every frame larger and sync.Pool drop items at
// random), and volume tests, thousands of calls made one after another
// on one goroutine, which it slows five times over with nothing to
// watch. .ci/run runs each such test again without the detector (its
// norace list, which internal/archtest keeps equal to the tests that
// skip here). A test of the race build itself, which checks something
// only under it, goes in a file of its own with //go:build race instead:
// the norace step could never see it pass.
package racebuild

import "testing"

// Skip skips t under the race detector, saying why; without it, it does
// nothing.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Enabled {
		t.Skip("under the race detector: " + why + " (.ci/run runs this test without it)")
	}
}
