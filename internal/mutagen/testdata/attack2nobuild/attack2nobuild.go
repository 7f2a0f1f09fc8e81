// Package attack2nobuild's test file does not compile.
package attack2nobuild

// Inc returns x + 1.
func Inc(x int) int { return x + 1 }
