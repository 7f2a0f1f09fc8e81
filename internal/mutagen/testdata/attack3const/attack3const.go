// Package attack3const holds expressions constant in part, typed constants,
// iota, constant conditions and a generic function's constant.
package attack3const

import "time"

const debug = false

type level int

const (
	low level = iota * 2
	high
)

// Part returns x * (3 / 2): x * 1.
func Part(x float64) float64 { return x * (3 / 2) }

// Wait returns time.Second * 2 plus d.
func Wait(d time.Duration) time.Duration { return time.Second*2 + d }

// Cond returns 1 when x is positive, and counts nothing when debug.
func Cond(x int) int {
	if debug && x > 0 {
		return 2
	}
	if high > 1 {
		return x - 1
	}
	return 0
}

// Gen returns x times the constant 7 / 2 (3), in T.
func Gen[T ~int | ~float64](x T) T { return x * (7 / 2) }
