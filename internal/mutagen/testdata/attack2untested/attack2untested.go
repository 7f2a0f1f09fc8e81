// Package attack2untested has a mutant its tests never reach: its score is
// 0 (none killed of one).
package attack2untested

// Inc returns x + 1.
func Inc(x int) int { return x + 1 }
