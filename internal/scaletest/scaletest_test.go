package scaletest

import (
	"testing"
	"time"
)

var sink uint64

// work does n rounds of arithmetic: CPU time in proportion to n.
func work(n int) {
	x := sink | 1
	for i := range n {
		x = x*6364136223846793005 + uint64(i)
	}
	sink = x
}

// Ten times the work reads as about ten times on the CPU clock (the wall
// clock's ratio, which another process's load moves, is not judged here).
func TestMeasureSeesGrowth(t *testing.T) {
	if cpuTime() == 0 {
		t.Skip("no CPU clock on this system")
	}
	g := Measure(3, func() { work(2_000_000) }, func() { work(20_000_000) })
	if r := float64(g.LargeCPU) / float64(g.SmallCPU); r < 4 || r > 25 {
		t.Errorf("10x the work: %v", g)
	}
	if g.Ratio() > 25 {
		t.Errorf("10x the work: %v", g)
	}
}

// A sleep costs wall time but no CPU: the smaller ratio is the CPU's,
// near 1, which is what a wait for another process's load looks like.
func TestRatioTakesTheSmallerClock(t *testing.T) {
	if cpuTime() == 0 {
		t.Skip("no CPU clock on this system")
	}
	g := Measure(2, func() { work(1_000_000) }, func() { work(1_000_000); time.Sleep(40 * time.Millisecond) })
	if g.LargeWall < 40*time.Millisecond {
		t.Fatalf("wall clock: %v", g)
	}
	if g.Ratio() > 5 {
		t.Errorf("a sleep judged as work: %v", g)
	}
}

func TestRatioOfNothing(t *testing.T) {
	if r := (Growth{}).Ratio(); r != 1 {
		t.Errorf("zero figures: %v", r)
	}
	if r := (Growth{SmallWall: 1, LargeWall: 30}).Ratio(); r != 30 {
		t.Errorf("wall only: %v", r)
	}
	g := Growth{SmallWall: 10, LargeWall: 400, SmallCPU: 10, LargeCPU: 120}
	if r := g.Ratio(); r != 12 {
		t.Errorf("%v: want the CPU's 12x", g)
	}
	g = Growth{SmallWall: 10, LargeWall: 90, SmallCPU: 10, LargeCPU: 120}
	if r, l := g.Ratio(), g.Large(); r != 9 || l != 90 {
		t.Errorf("%v: want the wall's 9x, Large 90", g)
	}
}

func TestMeasureRunsEachSizeRounds(t *testing.T) {
	var s, l int
	Measure(3, func() { s++ }, func() { l++ })
	if s != 4 || l != 3 {
		t.Errorf("small ran %d times (3 and a warm-up), large %d (3)", s, l)
	}
	s, l = 0, 0
	Measure(0, func() { s++ }, func() { l++ })
	if s != 2 || l != 1 {
		t.Errorf("rounds 0: small %d, large %d", s, l)
	}
}
