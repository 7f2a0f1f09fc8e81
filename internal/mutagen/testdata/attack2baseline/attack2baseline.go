// Package attack2baseline has an integer constant division in a float
// context: 3 / 2 is the untyped integer constant 1 (Go divides integer
// constants as integers), so Scale returns x unchanged.
package attack2baseline

// Scale returns x times the constant 3 / 2, which is 1.
func Scale(x float64) float64 { return x * (3 / 2) }
