package whatif_test

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/whatif"
)

var atkSink []byte

// churn holds live bytes (as a large trace's replay does) and makes
// garbage bytes in 16 KiB pieces, returning the wall time, GC cycles and
// GC CPU seconds it took.
func churn(live, garbage int) (time.Duration, uint32, float64) {
	hold := make([][]byte, live>>16)
	for i := range hold {
		hold[i] = make([]byte, 1<<16)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	cpu0 := s[0].Value.Float64()
	start := time.Now()
	for range garbage >> 14 {
		atkSink = make([]byte, 1<<14)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&ms)
	metrics.Read(s)
	runtime.KeepAlive(hold)
	return took, ms.NumGC - gc0, s[0].Value.Float64() - cpu0
}

// TestLimitPastLiveHeap: a what-if of a trace large enough to hold more
// than MemoryLimit live (the limit is "soft: a larger trace goes past
// it") must not spend its time collecting: under a soft limit below the
// live heap the collector runs back to back.
func TestLimitPastLiveHeap(t *testing.T) {
	racebuild.Skip(t, "the collector's figures over 4 GiB of garbage")
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	const live, garbage = 240 << 20, 4 << 30
	freeT, freeGC, freeCPU := churn(live, garbage)
	restore := whatif.LimitMemory()
	limT, limGC, limCPU := churn(live, garbage)
	restore()
	t.Logf("%d MiB live, %d MiB of garbage: %v, %d GCs, %.2f s GC CPU without the limit; %v, %d GCs, %.2f s GC CPU under it",
		live>>20, garbage>>20, freeT, freeGC, freeCPU, limT, limGC, limCPU)
	if limGC > 4*freeGC+4 {
		t.Errorf("%d collections under the limit, %d without: past the limit the collector runs back to back", limGC, freeGC)
	}
}
