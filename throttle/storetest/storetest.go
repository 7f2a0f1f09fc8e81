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
	"github.com/google/go-cmp/cmp/cmpopts"
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
		// A request stamped before its window opened (clocks read in the
		// other order than the requests reached the store) counts in it.
		{"a request stamped before its window's start", throttle.FirstRequest, throttle.Limit{Burst: 1, Sustain: 100}, time.Time{}, []take{
			{10.001, true, 1, 1, throttle.None, 0},
			{10, false, 2, 2, throttle.Burst, 15001 * time.Millisecond},
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

// Learned runs the learned-limits rule (throttle.LimitStore.Learn) against
// a fresh LimitStore: a lone report is a candidate, the same limit from
// another user or another window confirms it, a confirmed limit lasts
// throttle.LearnedFor after its latest report (and a candidate as long),
// reports out of bounds change nothing, and at most 2 ×
// throttle.MaxLearned windows are kept.
func Learned(t *testing.T, s throttle.LimitStore) {
	t.Helper()
	ctx := context.Background()
	const b, su = throttle.Burst, throttle.Sustain
	longest := strings.Repeat("s", throttle.MaxScopeLen) // the bounds themselves are in
	for i, st := range []struct {
		scope string
		p     throttle.Period
		n     int
		user  string
		at    float64
		want  int     // the limit in force after the report
		until float64 // and its end
	}{
		{"profile", b, 6, "a", 0, 0, 0},   // a candidate
		{"profile", b, 6, "a", 1, 0, 0},   // the same key in the same window: still one
		{"profile", b, 6, "b", 2, 6, 602}, // another user confirms it
		{"profile", b, 6, "a", 100, 6, 700},
		{"profile", b, 5, "c", 101, 6, 700}, // another limit: a candidate beside it
		{"profile", b, 6, "d", 50, 6, 700},  // timed before the latest report: no shorter
		{"profile", su, 20, "a", 0, 0, 0},
		{"profile", su, 20, "a", 299, 0, 0},
		{"profile", su, 20, "a", 300, 20, 900}, // the same user, another window
		{"social", b, 7, "a", 0, 0, 0},
		{"social", b, 8, "b", 1, 0, 0}, // another limit replaces the candidate
		{"social", b, 7, "c", 2, 0, 0},
		{"social", b, 7, "a", 3, 7, 603},
		{"achievements", b, 5, "a", 0, 0, 0},
		{"achievements", b, 5, "b", 600, 0, 0}, // the candidate lasted LearnedFor: a new one
		{"achievements", b, 5, "b", 601, 0, 0},
		{"achievements", b, 5, "a", 602, 5, 1202},
		{"largest", su, throttle.MaxLimit, "a", 0, 0, 0},
		{"largest", su, throttle.MaxLimit, "b", 1, throttle.MaxLimit, 601},
		{longest, b, 1, "a", 0, 0, 0},
		{longest, b, 1, "b", 1, 1, 601},
		{"user bounds", b, 2, strings.Repeat("u", throttle.MaxScopeLen), 0, 0, 0},
		{"user bounds", b, 2, strings.Repeat("v", throttle.MaxScopeLen), 1, 2, 601},
		{"long user", b, 3, strings.Repeat("u", throttle.MaxScopeLen+1), 0, 0, 0},
		{"long user", b, 3, strings.Repeat("v", throttle.MaxScopeLen+1), 1, 0, 0},
		{"bounds", b, 0, "a", 0, 0, 0},
		{"bounds", b, 0, "b", 1, 0, 0},
		{"bounds", b, throttle.MaxLimit + 1, "a", 2, 0, 0},
		{"bounds", b, throttle.MaxLimit + 1, "b", 3, 0, 0},
		{"bounds", throttle.None, 5, "a", 4, 0, 0},
		{"bounds", throttle.None, 5, "b", 5, 0, 0},
		{string(make([]byte, throttle.MaxScopeLen+1)), b, 5, "a", 6, 0, 0},
		{string(make([]byte, throttle.MaxScopeLen+1)), b, 5, "b", 7, 0, 0},
	} {
		got, err := s.Learn(ctx, throttle.LimitReport{Scope: st.scope, Period: st.p, Limit: st.n, User: st.user, At: at(st.at)})
		if err != nil {
			t.Fatalf("step %d: Learn: %v", i, err)
		}
		if got.Limit != st.want || st.want != 0 && !got.Until.Equal(at(st.until)) || st.want == 0 && got != (throttle.Learned{}) {
			t.Errorf("step %d: Learn(%.20q, %v, %d, %s, %vs) = %d until %v, want %d until %v", i, st.scope, st.p, st.n, st.user, st.at, got.Limit, got.Until, st.want, at(st.until))
		}
	}
	for _, q := range []struct {
		at   float64
		want []throttle.Learned
	}{
		{602, []throttle.Learned{{Scope: "profile", Period: b, Limit: 6, Until: at(700)}, {Scope: "profile", Period: su, Limit: 20, Until: at(900)}, {Scope: "social", Period: b, Limit: 7, Until: at(603)}, {Scope: "achievements", Period: b, Limit: 5, Until: at(1202)}}},
		{700, []throttle.Learned{{Scope: "profile", Period: su, Limit: 20, Until: at(900)}, {Scope: "achievements", Period: b, Limit: 5, Until: at(1202)}}},
		{1202, nil},
	} {
		got, err := s.Learned(ctx, at(q.at))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(q.want, got, cmpopts.SortSlices(func(a, b throttle.Learned) bool {
			return a.Scope < b.Scope || a.Scope == b.Scope && a.Period < b.Period
		}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Learned at %vs (-want +got):\n%s", q.at, diff)
		}
	}
	confirm := func(scope string, sec float64) {
		for _, p := range []throttle.Period{b, su} {
			for _, u := range []string{"a", "b"} {
				s.Learn(ctx, throttle.LimitReport{Scope: scope, Period: p, Limit: 1, User: u, At: at(sec)})
			}
		}
	}
	for i := range throttle.MaxLearned + 10 {
		confirm("scope"+strconv.Itoa(i), 2000)
	}
	if got, _ := s.Learned(ctx, at(2000)); len(got) > 2*throttle.MaxLearned || len(got) < 2*throttle.MaxLearned-20 {
		t.Errorf("after learning both windows of %d scopes the store holds %d, want at most %d", throttle.MaxLearned+10, len(got), 2*throttle.MaxLearned)
	}
	confirm("later", 2600) // every other record has lasted its time: room again
	if got, _ := s.Learned(ctx, at(2600)); len(got) != 2 || got[0].Scope != "later" {
		t.Errorf("once the full store's records have lasted their time, a new one is kept: got %d records, want the 2 of scope later", len(got))
	}
}
