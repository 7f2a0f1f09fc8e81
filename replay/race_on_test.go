//go:build race

package replay

// race reports whether the tests run under the race detector, whose
// instrumentation makes every frame larger.
const race = true
