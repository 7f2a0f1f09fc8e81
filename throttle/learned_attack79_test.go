package throttle_test

// An outside attack on the accounting core (attack79): learned limits.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: LimitStore.Learn, restated after this test (it was
// TestAttack79LearnLoneFutureReportEndsConfirmedLimit, a break as the godoc
// read): "A report is timed by its sender's clock (LimitReport.At), and the
// store has none of its own: a report timed at or past a limit's end
// finds that limit ended, as Learned at that time would." Burst 6
// confirmed at 100 s (to 700 s); a lone report of 5 timed an hour ahead
// finds it ended and returns none; a report timed before the end leaves
// it in force.
func TestAttack79LearnLoneFutureReportEndsConfirmedLimit(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: "a", At: at(99)})
	got, _ := b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: "b", At: at(100)})
	if got.Limit != 6 {
		t.Fatalf("confirmation: %+v", got)
	}
	if got, _ := b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 5, User: "c", At: at(699)}); got.Limit != 6 {
		t.Errorf("a lone report of 5 timed before the limit's end: %+v; want burst 6 still in force", got)
	}
	if got, _ := b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 5, User: "c", At: at(100 + 3600)}); got != (throttle.Learned{}) {
		t.Errorf("a lone report of 5 timed an hour ahead: %+v; want none in force at its time", got)
	}
	if in, _ := b.Learned(ctx, at(100+3600)); len(in) != 0 {
		t.Errorf("Learned at the report's time = %+v; want none", in)
	}
}

// Same promise: "in force ... until LearnedFor after the last report of
// it". Confirmed at 1000 s (to 1600 s); another transport's report of the
// same limit stamped 900 s (its clock 100 s behind, or its 429 handled
// late) arrives after it: the limit now ends at 1500 s, earlier than
// LearnedFor after the last report (1000 s).
func TestAttack79LearnStaleReportShortensLimit(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: "a", At: at(999)})
	b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: "b", At: at(1000)})
	got, _ := b.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: "c", At: at(900)})
	if want := at(1000).Add(throttle.LearnedFor); !got.Until.Equal(want) {
		t.Errorf("after a report stamped 900 s, Until = %v; want %v (LearnedFor after the last report, 1000 s)", got.Until.Sub(t0), want.Sub(t0))
	}
}

// held: MaxLearned and LimitStore.Learned, restated after this test (it
// was TestAttack79LearnedScopesOverMaxLearned, a break as the godoc read
// "scopes"): "at most 2 × MaxLearned windows (both windows of MaxLearned
// scopes, or one window of twice as many)". 3,072 scopes' burst windows,
// each confirmed: Learned returns 2,048 windows.
func TestAttack79LearnedScopesOverMaxLearned(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 * throttle.MaxLearned {
		scope := "s" + strconv.Itoa(i)
		b.Learn(ctx, throttle.LimitReport{Scope: scope, Period: throttle.Burst, Limit: 3, User: "a", At: t0})
		b.Learn(ctx, throttle.LimitReport{Scope: scope, Period: throttle.Burst, Limit: 3, User: "b", At: t0})
	}
	if in, _ := b.Learned(ctx, t0.Add(time.Second)); len(in) != 2*throttle.MaxLearned {
		t.Errorf("Learned holds %d windows; want 2 × MaxLearned, %d", len(in), 2*throttle.MaxLearned)
	}
}

// held: LimitStore.Learn: "a report of the same limit from another user,
// or from the same user a period or more after the candidate, confirms
// it"; a lone user's repeated reports within the period do not, and an
// unconfirmed lower candidate leaves the confirmed limit in force (no
// lowering or raising by one user).
func TestAttack79LearnOneUserCannotMoveLimitHeld(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	rep := func(lim int, user string, s int) throttle.Learned {
		l, _ := b.Learn(ctx, throttle.LimitReport{Scope: "p", Period: throttle.Burst, Limit: lim, User: user, At: at(s)})
		return l
	}
	rep(10, "a", 0)
	if l := rep(10, "b", 1); l.Limit != 10 {
		t.Fatalf("confirmation: %+v", l)
	}
	for i := range 14 {
		if l := rep(1, "x", 2+i); l.Limit != 10 {
			t.Fatalf("one user's report of 1 at %d s moved the limit: %+v", 2+i, l)
		}
		if l := rep(1000, "x", 2+i); l.Limit != 10 {
			t.Fatalf("one user's report of 1000 at %d s moved the limit: %+v", 2+i, l)
		}
	}
	in, _ := b.Learned(ctx, at(20))
	if len(in) != 1 || in[0].Limit != 10 {
		t.Errorf("Learned = %+v; want burst 10", in)
	}
}
