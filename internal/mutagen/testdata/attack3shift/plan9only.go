//go:build plan9

package attack3shift

// Plan9 is built only on Plan 9.
func Plan9(x int) int { return x + 1 }
