package replay

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/xblgo/fgrl/limits"
)

// TestNoKeysChangesNoFigure: a run with NoKeys gives every figure a run
// without gives (the calls, their outcomes and delays, the service's 429s
// per service and in all, the requests sent), without the keys' tables.
func TestNoKeysChangesNoFigure(t *testing.T) {
	p, l, err := WorkedExample(limits.Default())
	if err != nil {
		t.Fatal(err)
	}
	p = append(p, Event{At: time.Second, Service: "social", User: "2533274790000009", Count: 40, Spread: 20 * time.Second})
	for _, c := range []string{"naive", "fgrl"} {
		t.Run(c, func(t *testing.T) {
			want, err := Run(context.Background(), p, Options{Limits: l, Client: c})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(context.Background(), p, Options{Limits: l, Client: c, NoKeys: true})
			if err != nil {
				t.Fatal(err)
			}
			if got.Keys != nil || got.Rows != nil {
				t.Errorf("NoKeys: %d keys' tables and %d rows; want none", len(got.Keys), len(got.Rows))
			}
			if want.Server429s == 0 && c != "fgrl" {
				t.Errorf("the pattern met no 429 through %s: the test shows nothing", c)
			}
			want.Keys, want.Rows = nil, nil
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Delay{})); diff != "" {
				t.Errorf("NoKeys changed the result (-without +with):\n%s", diff)
			}
		})
	}
}

// TestRunTakesEventsInAnyOrder: Run replays a pattern in any order as it
// replays it sorted; RunEvents, which reads its events in order, refuses
// events out of time order.
func TestRunTakesEventsInAnyOrder(t *testing.T) {
	p, l, err := WorkedExample(limits.Default())
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Limits: l, Client: "naive"}
	want, err := Run(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	shuffled := slices.Clone(p)
	slices.Reverse(shuffled)
	got, err := Run(context.Background(), shuffled, o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Delay{})); diff != "" {
		t.Errorf("the pattern reversed replays otherwise (-sorted +reversed):\n%s", diff)
	}
	if len(p) < 2 || p[0].At == p[len(p)-1].At {
		t.Fatal("the worked example has no two times to reverse")
	}
	if _, err := RunEvents(context.Background(), shuffled, o); err == nil || !strings.Contains(err.Error(), "comes after") {
		t.Errorf("RunEvents of events out of order: %v; want an error", err)
	}
}

// TestScheduleHoldsOnlyStartedEvents: reading 200,000 single calls, the
// schedule holds the events whose calls are under way, not every event
// (before: a heap of all of them, each call's pop sorting through it).
func TestScheduleHoldsOnlyStartedEvents(t *testing.T) {
	p := make(Pattern, 200_000)
	for i := range p {
		p[i] = Event{At: time.Duration(i/2) * time.Millisecond, Service: "profile", User: "1", Count: 1}
	}
	p[10] = Event{At: p[10].At, Service: "social", User: "2", Count: 1000, Spread: time.Second}
	s := newSchedule(p)
	most, calls := 0, 0
	var last time.Duration
	for {
		_, at, ok := s.pop()
		if !ok {
			break
		}
		if at < last {
			t.Fatalf("call %d at %v after one at %v", calls, at, last)
		}
		last = at
		calls++
		most = max(most, len(s.on))
	}
	if calls != 200_999 {
		t.Errorf("%d calls; want 200,999", calls)
	}
	if most > 2 {
		t.Errorf("the schedule held up to %d events; want at most 2", most)
	}
}

// TestDelayPercentilesCountZeros: the delays' percentiles are the nearest
// ranks of every call's delay, the calls without one counted, not kept.
func TestDelayPercentilesCountZeros(t *testing.T) {
	for _, tt := range []struct {
		name string
		took []time.Duration
	}{
		{"none delayed", []time.Duration{0, 0, 0}},
		{"one of many", append(make([]time.Duration, 199), 5*time.Second)},
		{"half", []time.Duration{0, 3 * time.Millisecond, 0, 7 * time.Millisecond}},
		{"all", []time.Duration{9 * time.Millisecond, time.Millisecond, 4 * time.Millisecond}},
		{"one", []time.Duration{2 * time.Millisecond}},
		{"spread", []time.Duration{5, 0, 9, 1, 1, 0, 30, 2, 8, 7, 6, 0, 4, 3, 100, 2, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var one Delay
			var three [3]Delay // the samples spread over parts, as a priority's are over services
			for i, took := range tt.took {
				one.add(took, served)
				three[(i*7)%3].add(took, served)
			}
			d := summarize(&one)
			if d3 := summarize(&three[0], &three[1], &three[2]); !cmp.Equal(d, d3, cmpopts.IgnoreUnexported(Delay{})) {
				t.Errorf("in one part %+v, in three %+v", d, d3)
			}
			sorted := slices.Sorted(slices.Values(tt.took))
			rank := func(q float64) float64 {
				i := max(0, min(len(sorted)-1, int(math.Ceil(q*float64(len(sorted))))-1))
				return float64(sorted[i]) / float64(time.Millisecond)
			}
			got := []float64{d.P50Ms, d.P99Ms, d.MaxMs}
			want := []float64{rank(0.5), rank(0.99), rank(1)}
			if diff := cmp.Diff(want, got); diff != "" || d.Calls != len(tt.took) {
				t.Errorf("p50, p99, max (-want +got):\n%s\ncalls %d, want %d", diff, d.Calls, len(tt.took))
			}
		})
	}
}

// TestDelayAcrossManyParts: a priority's delays spread over many services
// (a limits file may name 4,096) give the percentiles of all of them
// sorted together, ties and zeros included.
func TestDelayAcrossManyParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, parts := range []int{1, 2, 7, 4096} {
		ds := make([]Delay, parts)
		var all []time.Duration
		for i := range 20_000 {
			took := time.Duration(rng.IntN(50)) * time.Duration(1+rng.IntN(3)) * time.Millisecond // ties, and zeros
			if i%1000 == 0 {
				took = time.Duration(1 + rng.Int64N(1<<50))
			}
			ds[rng.IntN(parts)].add(took, served)
			all = append(all, took)
		}
		ptrs := make([]*Delay, parts)
		for i := range ds {
			ptrs[i] = &ds[i]
		}
		got := summarize(ptrs...)
		slices.Sort(all)
		rank := func(q float64) float64 {
			i := max(0, min(len(all)-1, int(math.Ceil(q*float64(len(all))))-1))
			return float64(all[i]) / float64(time.Millisecond)
		}
		if want := []float64{rank(0.5), rank(0.99), rank(1)}; !cmp.Equal(want, []float64{got.P50Ms, got.P99Ms, got.MaxMs}) || got.Calls != len(all) {
			t.Errorf("%d parts: p50, p99, max %v %v %v, calls %d; want %v, %d", parts, got.P50Ms, got.P99Ms, got.MaxMs, got.Calls, want, len(all))
		}
	}
}

// TestPartsChangeNoFigure: a run of many users' calls in several parts at
// once gives every figure one part gives, the keys' tables included; with
// clients that learn limits from another user's answers (the service's
// limits not the clients') it runs in one part.
func TestPartsChangeNoFigure(t *testing.T) {
	l := limits.Default()
	var p Pattern
	for u := range 40 {
		user := strconv.Itoa(2533274790000000 + u)
		p = append(p, Event{At: time.Duration(u) * 700 * time.Millisecond, Service: "profile", User: user, Count: 25 + u%7, Spread: 10 * time.Second},
			Event{At: time.Duration(u) * time.Second, Service: "social", User: user, Count: 40, Spread: time.Duration(u%3) * time.Second})
	}
	for _, c := range []string{"naive", "fgrl"} {
		t.Run(c, func(t *testing.T) {
			want, err := Run(context.Background(), p, Options{Limits: l, Client: c})
			if err != nil {
				t.Fatal(err)
			}
			if want.Server429s == 0 && want.Refused == 0 {
				t.Fatalf("no call met a limit through %s: the test shows nothing", c)
			}
			for _, parts := range []int{2, 3, 7} {
				var steps []time.Time
				got, err := Run(context.Background(), p, Options{Limits: l, Client: c, Parts: parts, OnStep: func(until time.Time) { steps = append(steps, until) }})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Delay{})); diff != "" {
					t.Errorf("%d parts changed the result (-one part +parts):\n%s", parts, diff)
				}
				if len(steps) < 35 || !slices.IsSortedFunc(steps, time.Time.Compare) {
					t.Errorf("%d parts: %d steps, in order %v; want one a second through the run (39 s and more), in order", parts, len(steps), slices.IsSortedFunc(steps, time.Time.Compare))
				}
			}
		})
	}
	drift, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 5, "sustain": 20}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Limits: l, ServiceLimits: drift, Client: "fgrl", Parts: 4}
	if o.parts() != 1 {
		t.Errorf("with the service's own limits: %d parts; want 1", o.parts())
	}
}

// releasing is a Pattern that is a Releaser: it fails the test when an
// event is read after a release said it would not be.
type releasing struct {
	Pattern
	t        *testing.T
	released atomic.Int64
	calls    atomic.Int64 // Release calls
}

func (r *releasing) Event(i int) Event {
	if n := r.released.Load(); int64(i) < n {
		r.t.Errorf("event %d read after Release(%d)", i, n)
	}
	return r.Pattern[i]
}

func (r *releasing) Release(n int) {
	r.calls.Add(1)
	if int64(n) < r.released.Load() {
		r.t.Errorf("Release(%d) after Release(%d)", n, r.released.Load())
	}
	r.released.Store(int64(n))
}

// TestReleasedEventsNotReadAgain: a Releaser's events are released as the
// parts pass them, never one a part still reads, and the result is the
// one the events give held whole.
func TestReleasedEventsNotReadAgain(t *testing.T) {
	l := limits.Default()
	var p Pattern
	for i := range 4000 {
		user := strconv.Itoa(2533274790000000 + i%40)
		e := Event{At: time.Duration(i) * 25 * time.Millisecond, Service: "profile", User: user, Count: 1}
		if i%50 == 0 {
			e.Count, e.Spread = 5, 3*time.Second // started once, then held, not read again
		}
		p = append(p, e)
	}
	for _, parts := range []int{1, 2, 3} {
		o := Options{Limits: l, Client: "fgrl", Parts: parts, OnStep: func(time.Time) {}, Step: 500 * time.Millisecond}
		want, err := Run(context.Background(), p, o)
		if err != nil {
			t.Fatal(err)
		}
		r := &releasing{Pattern: p, t: t}
		got, err := RunEvents(context.Background(), r, o)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Delay{})); diff != "" {
			t.Errorf("%d parts: released events changed the result:\n%s", parts, diff)
		}
		if n := r.released.Load(); n < int64(len(p))*9/10 || r.calls.Load() < 150 {
			t.Errorf("%d parts: %d Release calls, the last Release(%d) of %d events; want one a step, and at least nine tenths", parts, r.calls.Load(), n, len(p))
		}
	}
}
