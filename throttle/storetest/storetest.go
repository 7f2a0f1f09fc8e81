// Package storetest is a conformance suite for throttle stores: any
// ServerStore or BudgetStore must pass the same timelines as the in-memory
// ones. Stores that keep their own clock must be run with the caller's time
// (redisstore.Store.CallerTime).
package storetest

import (
	"context"
	"strconv"
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
// (one per timeline).
func ServerRule(t *testing.T, newStore func(align throttle.Align) throttle.ServerStore) {
	tests := []struct {
		name  string
		align throttle.Align
		limit throttle.Limit
		takes []take
	}{
		{"burst then sustain", throttle.FirstRequest, throttle.Limit{Burst: 2, Sustain: 3}, []take{
			{0, true, 1, 1, throttle.None, 0},
			{1, true, 2, 2, throttle.None, 0},
			{2, false, 3, 3, throttle.Burst, 13 * time.Second},
			{14, false, 4, 4, throttle.Sustain, 286 * time.Second},
			{15, false, 1, 5, throttle.Sustain, 285 * time.Second},
			{299, false, 1, 6, throttle.Sustain, time.Second},
			{300, true, 2, 1, throttle.None, 0},
		}},
		{"window opens at the first request", throttle.FirstRequest, throttle.Limit{Burst: 1, Sustain: 100}, []take{
			{1, true, 1, 1, throttle.None, 0},
			{15, false, 2, 2, throttle.Burst, time.Second},
			{16, true, 1, 3, throttle.None, 0},
		}},
		{"clock aligned", throttle.ClockAligned, throttle.Limit{Burst: 1, Sustain: 100}, []take{
			{1, true, 1, 1, throttle.None, 0},
			{14, false, 2, 2, throttle.Burst, time.Second},
			{15, true, 1, 3, throttle.None, 0},
		}},
		{"sustain only", throttle.FirstRequest, throttle.Limit{Sustain: 2}, []take{
			{0, true, 1, 1, throttle.None, 0},
			{0, true, 2, 2, throttle.None, 0},
			{0, false, 3, 3, throttle.Sustain, 300 * time.Second},
		}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		s := newStore(tt.align)
		k := throttle.Key{User: "u-" + tt.name, Title: "t", Scope: "s"}
		for i, tk := range tt.takes {
			d, err := s.Take(ctx, k, tt.limit, at(tk.at))
			if err != nil {
				t.Fatalf("%s step %d: %v", tt.name, i, err)
			}
			got := take{tk.at, d.Allowed, d.Burst.Count, d.Sustain.Count, d.Limiter, d.RetryAfter}
			if diff := cmp.Diff(tk, got, cmp.AllowUnexported(take{})); diff != "" {
				t.Errorf("%s step %d mismatch (-want +got):\n%s", tt.name, i, diff)
			}
		}
		d, err := s.Peek(ctx, k, tt.limit, at(tt.takes[len(tt.takes)-1].at))
		last := tt.takes[len(tt.takes)-1]
		if err != nil || d.Burst.Count != last.burst || d.Sustain.Count != last.sustain {
			t.Errorf("%s: Peek = %+v, %v; want the last counts", tt.name, d, err)
		}
	}
}

type reserve struct {
	at      float64
	maxWait time.Duration
	allowed bool
	wait    time.Duration
}

// BudgetRule runs the client-budget timelines against stores made by newStore.
func BudgetRule(t *testing.T, newStore func() throttle.BudgetStore) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 2, Sustain: 3}
	s := newStore()
	k := throttle.Key{User: "u", Title: "t", Scope: "budget"}
	for i, r := range []reserve{
		{0, 0, true, 0},
		{1, 0, true, 0},
		{2, 0, false, 13 * time.Second},
		{2, 20 * time.Second, true, 13 * time.Second}, // booked at 15 s
		{16, 0, false, 284 * time.Second},             // sustain: 3 in (16-300, 16]
		{300, 0, true, 0},
	} {
		a, err := s.Reserve(ctx, k, l, at(r.at), r.maxWait)
		got := reserve{r.at, r.maxWait, a.Allowed, a.Wait}
		if err != nil {
			t.Fatalf("reserve %d: %v", i, err)
		}
		if diff := cmp.Diff(r, got, cmp.AllowUnexported(reserve{})); diff != "" {
			t.Errorf("reserve %d mismatch (-want +got):\n%s", i, diff)
		}
	}
	// A block wins over the budget, and an earlier one never shortens it.
	k2 := throttle.Key{User: "u2", Title: "t", Scope: "budget"}
	s.Block(ctx, k2, at(0), at(30))
	s.Block(ctx, k2, at(0), at(10))
	a, err := s.Reserve(ctx, k2, l, at(1), 0)
	if err != nil || a.Allowed || !a.Blocked || a.Wait != 29*time.Second {
		t.Errorf("reserve while blocked = %+v, %v", a, err)
	}
	// Sync records what the service counted.
	k3 := throttle.Key{User: "u3", Title: "t", Scope: "budget"}
	big := throttle.Limit{Burst: 10, Sustain: 30}
	s.Reserve(ctx, k3, big, at(0), 0)
	if err := s.Sync(ctx, k3, big, at(1), throttle.Burst, 10, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, k3, big, at(1))
	if err != nil || snap.Burst.Count != 10 || snap.Wait != 5*time.Second || snap.Sustain.Count != 10 {
		t.Errorf("after Sync: %+v, %v", snap, err)
	}
	snap, err = s.Snapshot(ctx, k2, l, at(1))
	if err != nil || !snap.BlockedUntil.Equal(at(30)) {
		t.Errorf("blocked snapshot: %+v, %v", snap, err)
	}
	release(t, s)
}

// release: a booked slot given back no longer counts; an unknown slot
// changes nothing.
func release(t *testing.T, s throttle.BudgetStore) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 2, Sustain: 3}
	k := throttle.Key{User: "u4", Title: "t", Scope: "budget"}
	s.Reserve(ctx, k, l, at(0), 0)
	s.Reserve(ctx, k, l, at(1), 0)
	booked, err := s.Reserve(ctx, k, l, at(2), 20*time.Second) // waits for 15 s
	if err != nil || !booked.Allowed || booked.Slot == 0 {
		t.Fatalf("booking = %+v, %v", booked, err)
	}
	if err := s.Release(ctx, k, l, booked.Slot+1000); err != nil {
		t.Fatal(err)
	}
	if snap, _ := s.Snapshot(ctx, k, l, at(20)); snap.Sustain.Count != 3 {
		t.Errorf("an unknown slot released something: sustain count %d, want 3", snap.Sustain.Count)
	}
	if err := s.Release(ctx, k, l, booked.Slot); err != nil {
		t.Fatal(err)
	}
	if snap, _ := s.Snapshot(ctx, k, l, at(20)); snap.Sustain.Count != 2 {
		t.Errorf("after Release: sustain count %d, want 2", snap.Sustain.Count)
	}
	if a, _ := s.Reserve(ctx, k, l, at(20), 0); !a.Allowed {
		t.Errorf("the released slot is not free again: %+v", a)
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
}

// Learned runs the learned-limits rule against a fresh LimitStore: a
// window learned is kept, a later report replaces it, a report out of
// bounds changes nothing, and at most throttle.MaxLearned scopes are kept.
func Learned(t *testing.T, s throttle.LimitStore) {
	t.Helper()
	ctx := context.Background()
	for _, l := range []struct {
		scope string
		p     throttle.Period
		n     int
	}{
		{"profile", throttle.Burst, 8},
		{"profile", throttle.Sustain, 40},
		{"profile", throttle.Burst, 9}, // a later report replaces the first
		{"host:example.com", throttle.Sustain, 20},
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
	want := map[string]throttle.Limit{"profile": {Burst: 9, Sustain: 40}, "host:example.com": {Sustain: 20}}
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
