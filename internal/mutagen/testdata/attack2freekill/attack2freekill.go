// Package attack2freekill has a mutant no test can kill, x / (3 / 2), which
// is x * (3 / 2): both are x, since the constant 3 / 2 is 1.
package attack2freekill

// Grow returns x times the constant 3 / 2, which is 1.
func Grow(x float64) float64 { return x * (3 / 2) }
