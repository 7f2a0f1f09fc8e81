package replay

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/leakcheck"
	"github.com/xblgo/fgrl/limits"
	"go.uber.org/goleak"
)

// TestGoroutinesFollowWaitsNotCalls: 100,000 calls at one instant start a
// handful of workers, not a goroutine per call (before: one parked goroutine
// and 5.2 KB per call; 600,000 calls took 3.1 GB).
func TestGoroutinesFollowWaitsNotCalls(t *testing.T) {
	for _, client := range Clients {
		t.Run(client, func(t *testing.T) {
			p := Pattern{
				{At: 0, Service: "profile", User: "2533274790000001", Count: 100_000},
				{At: 0, Service: "presence/read", User: "2533274790000002", Count: 1000, Spread: time.Minute},
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r, res, err := runWithRunner(p, Options{Limits: limits.Default(), Client: client})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			t.Logf("%d calls: at most %d workers at once; heap %d KB after", res.Calls, r.maxLive, after.HeapInuse>>10)
			if res.Calls != 101_000 || res.Served+res.Refused+res.Failed+throttledCalls(res) != res.Calls {
				t.Errorf("outcomes %+v do not add up to the calls", res)
			}
			if r.maxLive > 100 {
				t.Errorf("%d workers at once for %d calls; want a handful", r.maxLive, res.Calls)
			}
		})
	}
}

// runWithRunner is Run, keeping the runner for inspection.
func runWithRunner(p Pattern, o Options) (*runner, Result, error) {
	var got *runner
	o.onRunner = func(r *runner) { got = r }
	res, err := Run(context.Background(), p, o)
	return got, res, err
}

// TestScheduleMergesEvents: overlapping events run at the same time, and a
// large count spread over a day does not overflow (the next event was put
// at 178,620 s before).
func TestScheduleMergesEvents(t *testing.T) {
	p := Pattern{
		{At: 0, Service: "profile", User: "1", Count: 10, Spread: 10 * time.Second},
		{At: 0, Service: "achievements", User: "2", Count: 10, Spread: 10 * time.Second},
		{At: 100 * time.Second, Service: "profile", User: "3", Count: 200_000, Spread: 24 * time.Hour},
	}
	s := newSchedule(p)
	var times []time.Duration
	for {
		_, at, ok := s.pop()
		if !ok {
			break
		}
		times = append(times, at)
	}
	if len(times) != 200_020 {
		t.Fatalf("%d calls, want 200,020", len(times))
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			t.Fatalf("call %d at %v comes before call %d at %v", i, times[i], i-1, times[i-1])
		}
	}
	if times[1] != 0 || times[19] != 9*time.Second {
		t.Errorf("the two overlapping events did not interleave: %v", times[:20])
	}
	if last := times[len(times)-1]; last >= 100*time.Second+24*time.Hour || last < 100*time.Second+23*time.Hour {
		t.Errorf("last call at %v, want just under 24h after 100 s", last)
	}
}

// TestWorkersReusedNotRespawned: calls each at an instant of their own
// reuse the parked workers instead of starting a goroutine a call (before:
// 2,001 goroutines for 2,000 calls, each growing its stack anew, a fifth of
// a what-if's CPU), and the parked ones end with the run.
func TestWorkersReusedNotRespawned(t *testing.T) {
	p := Pattern{{At: 0, Service: "profile", User: "2533274790000001", Count: 2000, Spread: time.Hour}}
	g0, before := goroutinesCreated(), goleak.IgnoreCurrent()
	if _, _, err := runWithRunner(p, Options{Limits: limits.Default(), Client: "fgrl"}); err != nil {
		t.Fatal(err)
	}
	if made := goroutinesCreated() - g0; made > 50 {
		t.Errorf("%d goroutines started for 2,000 calls one at a time; want a handful", made)
	}
	// The parked workers end with the run (goleak waits for their exits).
	goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
}

// goroutinesCreated reads the runtime's count of goroutines ever created.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
