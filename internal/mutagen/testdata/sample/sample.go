// Package sample holds one of each form of code mutagen edits, for its
// tests: the sample's own tests kill every mutant but the one of Max, which
// no test can tell apart, and those of Unused, which no test reaches.
package sample

import (
	_ "embed"
	"strings"
	"time"
)

// size is a constant declaration, and table's length an array length: both
// must stay constant, so neither is edited.
const size = 2 * 3

var table [size + 1]int

//go:embed greeting.txt
var greeting string

// hello is greeting as the package initialises: an edit of greeting.txt
// must be in it.
var hello = strings.TrimSpace(greeting)

type flag bool

// Less compares.
func Less(a, b int) bool { return a < b }

// Sum adds with a loop whose post statement is an increment.
func Sum(xs []int) int {
	s := 0
	for i := 0; i < len(xs); i++ {
		s = s + xs[i]
	}
	return s
}

// Count increments a map entry, as a statement.
func Count(m map[string]int, k string) {
	m[k]++
}

// Neg negates.
func Neg(x int) int { return -x }

// Window is a constant expression in a function body, typed by its context:
// left alone (the compiler's arithmetic, which a run-time helper is not).
func Window() int64 { return 2 * int64(time.Second) }

// Half divides a duration, whose type is another package's.
func Half(d time.Duration) time.Duration { return d / 2 }

// Odd takes a remainder.
func Odd(n int) bool { return n%2 == 1 }

// Greet concatenates strings, which is not edited.
func Greet(name string) string { return hello + " " + name }

// Positive converts a comparison to a named boolean type, which is not
// edited.
func Positive(x int) flag { return flag(x > 0) }

// Max has a mutant no test can tell apart: > or >= picks equal values alike.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Unused is reached by no test.
func Unused(x int) int { return x + 1 + table[0] }
