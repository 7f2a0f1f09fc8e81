package replay

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/leakcheck"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/limits"
	"go.uber.org/goleak"
)

// TestGoroutinesFollowWaitsNotCalls: 20,000 calls at one instant start a
// handful of workers, not a goroutine per call (before: one parked goroutine
// and 5.2 KB per call; 600,000 calls took 3.1 GB).
func TestGoroutinesFollowWaitsNotCalls(t *testing.T) {
	for _, client := range Clients {
		t.Run(client, func(t *testing.T) {
			p := Pattern{
				{At: 0, Service: "profile", User: "2533274790000001", Count: 20_000},
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
			if res.Calls != 21_000 || res.Served+res.Refused+res.Failed+throttledCalls(res) != res.Calls {
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

// TestWaitingCallsKeepSmallStacks: 3,000 calls waiting for their budget at
// once hold a goroutine each, and each of those has run no call before it
// (before: a worker that had sent calls, through the transport and the
// mock, took the next one with the 8 to 16 KiB stack it had grown to, which
// the collector does not shrink while the call waits: 7,360 waiting calls
// held 72 MiB of stacks in a what-if of 2 M calls). A waiting call's own
// frames fit 4 KiB only just: the transport's RoundTrip keeps a coalesced
// read's key off the stack of other calls, and the replay's call takes its
// event by pointer and counts it in tallies (with either undone, 8.3 KiB a
// waiting call). The parked workers end with the run.
func TestWaitingCallsKeepSmallStacks(t *testing.T) {
	const users, waiting = 1500, 2 // 12 calls at once against a burst limit of 10
	var p Pattern
	for u := range users {
		p = append(p, Event{At: 0, Service: "profile", User: strconv.Itoa(2533274790000001 + u), Count: 12})
	}
	before := goleak.IgnoreCurrent()
	var perCall float64
	var goroutines int
	o := Options{Limits: limits.Default(), Client: "fgrl", Step: time.Second, OnStep: func(time.Time) {
		if goroutines > 0 {
			return
		}
		runtime.GC() // shrinks what can be shrunk, and frees the stacks of goroutines that ended
		s := []metrics.Sample{{Name: "/memory/classes/heap/stacks:bytes"}}
		metrics.Read(s)
		goroutines = runtime.NumGoroutine()
		perCall = float64(s[0].Value.Uint64()) / float64(users*waiting)
	}}
	r, res, err := runWithRunner(p, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != users*12 || res.Served != users*12 {
		t.Fatalf("%d calls, %d served; want %d of each", res.Calls, res.Served, users*12)
	}
	t.Logf("%d goroutines while %d calls wait, %.0f bytes of stacks a waiting call; at most %d workers at once",
		goroutines, users*waiting, perCall, r.maxLive)
	if goroutines < users*waiting {
		t.Fatalf("%d goroutines at the first step; want the %d waiting calls' at least", goroutines, users*waiting)
	}
	// The parked workers end with the run (goleak waits for their exits).
	goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
	racebuild.Skip(t, "every frame is larger in its build: 8 KiB stacks either way")
	if perCall > 5<<10 {
		t.Errorf("%.0f bytes of stacks a waiting call; want the 4 KiB a goroutine that ran no other call needs", perCall)
	}
}
