// Package scaletest times one piece of work at a small and a large size
// for the tests that judge whether it grows linearly (tests only).
//
// Such a test once compared the least of five runs at each size, the
// small ones first: CI runs it beside its fuzzing and another test
// binary on two cores, and a load that lasted through the large runs made
// a linear scrub read 35.8x for 10x the input (2026-12-07; 12x on a quiet
// machine). Measure alternates the sizes, so a load falls on both, and
// takes two clocks: the wall clock, which another process's load
// inflates, and the process's CPU time (user and system), which it does
// not, but which another goroutine of the same binary would. Growth's
// Ratio is the smaller of the two ratios: work that grows with the square
// of its input shows it on both clocks.
package scaletest

import (
	"fmt"
	"time"
)

// Growth is what Measure found: the least time of each size on each
// clock.
type Growth struct {
	SmallWall, LargeWall time.Duration
	SmallCPU, LargeCPU   time.Duration
}

// Measure runs small and large alternately, rounds times each (at least
// once), after one run of small that is not counted (a warm-up).
func Measure(rounds int, small, large func()) Growth {
	small()
	g := Growth{SmallWall: 1 << 62, LargeWall: 1 << 62, SmallCPU: 1 << 62, LargeCPU: 1 << 62}
	for range max(rounds, 1) {
		w, c := timeOf(small)
		g.SmallWall, g.SmallCPU = min(g.SmallWall, w), min(g.SmallCPU, c)
		w, c = timeOf(large)
		g.LargeWall, g.LargeCPU = min(g.LargeWall, w), min(g.LargeCPU, c)
	}
	return g
}

func timeOf(f func()) (wall, cpu time.Duration) {
	c0 := cpuTime()
	start := time.Now()
	f()
	return time.Since(start), cpuTime() - c0
}

// Ratio is the smaller of the large size's time over the small one's on
// each clock. A clock whose small figure is zero (too short to see) is
// not judged; with both so, Ratio is 1.
func (g Growth) Ratio() float64 {
	r := 0.0
	for _, p := range [][2]time.Duration{{g.SmallWall, g.LargeWall}, {g.SmallCPU, g.LargeCPU}} {
		if p[0] <= 0 {
			continue
		}
		if q := float64(p[1]) / float64(p[0]); r == 0 || q < r {
			r = q
		}
	}
	if r == 0 {
		return 1
	}
	return r
}

// Large is the large size's least time, the smaller of the two clocks
// (for a floor under which a ratio is not judged).
func (g Growth) Large() time.Duration { return min(g.LargeWall, g.LargeCPU) }

// String gives both clocks' figures and the ratio, for a test's log.
func (g Growth) String() string {
	return fmt.Sprintf("wall %v then %v, CPU %v then %v: %.1fx", g.SmallWall, g.LargeWall, g.SmallCPU, g.LargeCPU, g.Ratio())
}
