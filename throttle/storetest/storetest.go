// Package storetest is a conformance suite for throttle stores: any
// ServerStore or BudgetStore must pass the same timelines as the in-memory
// ones. Stores that keep their own clock must be run with the caller's time
// (redisstore.Store.CallerTime). Each case is a subtest named after the
// behaviour it checks, so that a failure, or a mutant of a store the suite
// kills, names the rule that broke.
package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/throttle"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

type take struct {
	at             float64
	allowed        bool
	burst, sustain int
	limiter        throttle.Period
	retry          time.Duration
}

// ServerRule runs the server-rule timelines against stores made by newStore
// (one per timeline), as subtests of "server".
func ServerRule(t *testing.T, newStore func(align throttle.Align) throttle.ServerStore) {
	tests := []struct {
		name  string
		align throttle.Align
		limit throttle.Limit
		start time.Time // the instant at 0 s; t0 when zero
		takes []take
	}{
		{"burst then sustain", throttle.FirstRequest, throttle.Limit{Burst: 2, Sustain: 3}, time.Time{}, []take{
			{0, true, 1, 1, throttle.None, 0},
			{1, true, 2, 2, throttle.None, 0},
			{2, false, 3, 3, throttle.Burst, 13 * time.Second},
			{14, false, 4, 4, throttle.Sustain, 286 * time.Second},
			{15, false, 1, 5, throttle.Sustain, 285 * time.Second},
			{299, false, 1, 6, throttle.Sustain, time.Second},
			{300, true, 2, 1, throttle.None, 0},
		}},
		{"window opens at the first request", throttle.FirstRequest, throttle.Limit{Burst: 1, Sustain: 100}, time.Time{}, []take{
			{1, true, 1, 1, throttle.None, 0},
			{15, false, 2, 2, throttle.Burst, time.Second},
			{16, true, 1, 3, throttle.None, 0},
		}},
		{"clock aligned", throttle.ClockAligned, throttle.Limit{Burst: 1, Sustain: 100}, time.Time{}, []take{
			{1, true, 1, 1, throttle.None, 0},
			{14, false, 2, 2, throttle.Burst, time.Second},
			{15, true, 1, 3, throttle.None, 0},
		}},
		{"sustain only", throttle.FirstRequest, throttle.Limit{Sustain: 2}, time.Time{}, []take{
			{0, true, 1, 1, throttle.None, 0},
			{0, true, 2, 2, throttle.None, 0},
			{0, false, 3, 3, throttle.Sustain, 300 * time.Second},
		}},
		{"burst only", throttle.FirstRequest, throttle.Limit{Burst: 2}, time.Time{}, []take{
			{0, true, 1, 1, throttle.None, 0},
			{0, true, 2, 2, throttle.None, 0},
			{1, false, 3, 3, throttle.Burst, 14 * time.Second},
			{15, true, 1, 4, throttle.None, 0},
		}},
		{"both over, the burst window ending last", throttle.FirstRequest, throttle.Limit{Burst: 1, Sustain: 1}, time.Time{}, []take{
			{0, true, 1, 1, throttle.None, 0},
			{290, false, 1, 2, throttle.Sustain, 10 * time.Second}, // burst window [290, 305)
			{291, false, 2, 3, throttle.Burst, 14 * time.Second},
		}},
		{"first window near the Unix epoch", throttle.FirstRequest, throttle.Limit{Burst: 1, Sustain: 2}, time.Unix(0, 0), []take{
			{5, true, 1, 1, throttle.None, 0},
			{19, false, 2, 2, throttle.Burst, time.Second}, // window [5 s, 20 s)
			{20, false, 1, 3, throttle.Sustain, 285 * time.Second},
		}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run("server/"+tt.name, func(t *testing.T) {
			start := tt.start
			if start.IsZero() {
				start = t0
			}
			when := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
			s := newStore(tt.align)
			k := throttle.Key{User: "u-" + tt.name, Title: "t", Scope: "s"}
			for i, tk := range tt.takes {
				d, err := s.Take(ctx, k, tt.limit, when(tk.at))
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got := take{tk.at, d.Allowed, d.Burst.Count, d.Sustain.Count, d.Limiter, d.RetryAfter}
				if diff := cmp.Diff(tk, got, cmp.AllowUnexported(take{})); diff != "" {
					t.Errorf("step %d mismatch (-want +got):\n%s", i, diff)
				}
			}
			last := tt.takes[len(tt.takes)-1]
			d, err := s.Peek(ctx, k, tt.limit, when(last.at))
			if err != nil || d.Burst.Count != last.burst || d.Sustain.Count != last.sustain {
				t.Errorf("Peek = %+v, %v; want the last counts", d, err)
			}
		})
	}
}

// Reset checks a store's throttle.Resetter: Reset forgets one key's counts
// and leaves the others; ResetAll forgets them all.
func Reset(t *testing.T, s interface {
	throttle.ServerStore
	throttle.Resetter
}) {
	t.Helper()
	ctx := context.Background()
	l := throttle.Limit{Burst: 10, Sustain: 100}
	k1 := throttle.Key{User: "u1", Title: "t", Scope: "reset"}
	k2 := throttle.Key{User: "u2", Title: "t", Scope: "reset"}
	take := func(k throttle.Key, n int) {
		for range n {
			if _, err := s.Take(ctx, k, l, at(1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(k throttle.Key) int {
		d, err := s.Peek(ctx, k, l, at(2))
		if err != nil {
			t.Fatal(err)
		}
		return d.Burst.Count
	}
	take(k1, 3)
	take(k2, 2)
	if err := s.Reset(ctx, k1); err != nil {
		t.Fatal(err)
	}
	if c1, c2 := count(k1), count(k2); c1 != 0 || c2 != 2 {
		t.Errorf("after Reset(k1): counts %d and %d, want 0 and 2", c1, c2)
	}
	if err := s.ResetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if c2 := count(k2); c2 != 0 {
		t.Errorf("after ResetAll: k2 counts %d, want 0", c2)
	}
	if err := s.ResetAll(ctx); err != nil {
		t.Errorf("ResetAll of an empty store: %v", err)
	}
}

// Learned runs the learned-limits rule against a fresh LimitStore: a
// window learned is kept, a later report replaces it, a report out of
// bounds changes nothing (the bounds themselves are in), and at most
// throttle.MaxLearned scopes are kept.
func Learned(t *testing.T, s throttle.LimitStore) {
	t.Helper()
	ctx := context.Background()
	longest := strings.Repeat("s", throttle.MaxScopeLen)
	for _, l := range []struct {
		scope string
		p     throttle.Period
		n     int
	}{
		{"profile", throttle.Burst, 8},
		{"profile", throttle.Sustain, 40},
		{"profile", throttle.Burst, 9}, // a later report replaces the first
		{"host:example.com", throttle.Sustain, 20},
		{"largest", throttle.Sustain, throttle.MaxLimit},
		{longest, throttle.Burst, 1},
		{"social", throttle.Burst, 0},                                     // out of bounds: nothing
		{"social", throttle.Burst, throttle.MaxLimit + 1},                 // out of bounds
		{"social", throttle.None, 5},                                      // no such window
		{string(make([]byte, throttle.MaxScopeLen+1)), throttle.Burst, 5}, // scope too long
	} {
		if err := s.Learn(ctx, l.scope, l.p, l.n); err != nil {
			t.Fatalf("Learn(%.20q, %v, %d): %v", l.scope, l.p, l.n, err)
		}
	}
	got, err := s.Learned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]throttle.Limit{
		"profile": {Burst: 9, Sustain: 40}, "host:example.com": {Sustain: 20},
		"largest": {Sustain: throttle.MaxLimit}, longest: {Burst: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Learned (-want +got):\n%s", diff)
	}
	for i := range throttle.MaxLearned {
		s.Learn(ctx, "scope"+strconv.Itoa(i), throttle.Burst, 1)
	}
	if got, _ := s.Learned(ctx); len(got) != throttle.MaxLearned {
		t.Errorf("after learning %d more scopes the store holds %d, want at most %d", throttle.MaxLearned, len(got), throttle.MaxLearned)
	}
}
