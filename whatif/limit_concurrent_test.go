package whatif_test

import (
	"math"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/whatif"
)

// TestLimitMemoryConcurrent: what-ifs that start and end at once in one
// process (two Replayers run by a server, or tests in parallel) must leave
// the process with the limit it had before them: none.
func TestLimitMemoryConcurrent(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(before)
	for round := range 200 {
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 2000 {
					whatif.LimitMemory()()
				}
			}()
		}
		wg.Wait()
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Fatalf("round %d: limit %d after every what-if ended; want none, as before them", round, got)
		}
	}
}

// TestLimitMemoryOverlapping: two what-ifs that overlap, the first
// ending first: the second runs on without the limit, and the process is
// left without one.
func TestLimitMemoryOverlapping(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(before)
	a := whatif.LimitMemory()
	b := whatif.LimitMemory()
	a()
	if got := debug.SetMemoryLimit(-1); got != whatif.MemoryLimit {
		t.Errorf("limit %d while the second what-if still runs; want %d", got, whatif.MemoryLimit)
	}
	b()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after both; want none", got)
	}
}
