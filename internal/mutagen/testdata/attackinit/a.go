// Package attackinit has mutants that every test reaches while the package
// initialises: a package-level variable's initialiser, and the init
// function of a file whose name sorts before mutagen's generated file.
package attackinit

var base = 10

// double is computed as the package initialises.
var double = base * 2

var next int

func init() { next = base + 1 }

// Double returns double.
func Double() int { return double }

// Next returns next.
func Next() int { return next }
