// Package attack2skip has a mutant its one test reaches and then skips.
package attack2skip

// Inc returns x + 1.
func Inc(x int) int { return x + 1 }
