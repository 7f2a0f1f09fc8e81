package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/throttle"
)

type reserve struct {
	at      float64
	maxWait time.Duration
	allowed bool
	wait    time.Duration
}

// budgetCase is one client-budget behaviour: run drives a fresh key of a
// store whose budgets lengthen both periods by margin (negative: none).
type budgetCase struct {
	name   string
	margin time.Duration
	run    func(t *testing.T, s throttle.BudgetStore, k throttle.Key)
}

// BudgetRule runs the client-budget timelines against stores made by
// newStore, as subtests of "budget". newStore(margin) returns a store whose
// budgets lengthen both periods by margin; a negative margin means none.
func BudgetRule(t *testing.T, newStore func(margin time.Duration) throttle.BudgetStore) {
	for _, c := range budgetCases {
		t.Run("budget/"+c.name, func(t *testing.T) {
			c.run(t, newStore(c.margin), throttle.Key{User: "u-" + c.name, Title: "t", Scope: "budget"})
		})
	}
}

var budgetCases = []budgetCase{
	{"a booking ahead given back leaves the calls sent counted", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		var rs []reserve
		for _, when := range []float64{0, 15, 30} {
			for range 10 {
				rs = append(rs, reserve{when, 0, true, 0})
			}
		}
		reserves(t, s, k, l, rs) // the ring full: the sustain's 30
		booked, err := s.Reserve(context.Background(), k, l, at(31), 10*time.Minute)
		if err != nil || !booked.Allowed || booked.Wait != 269*time.Second {
			t.Fatalf("booking ahead = %+v, %v; want allowed, Wait 269s", booked, err)
		}
		if err := s.Release(context.Background(), k, l, booked.Slot); err != nil { // not sent
			t.Fatal(err)
		}
		reserves(t, s, k, l, []reserve{{46, 0, false, 254 * time.Second}}) // the 30 sent still in the span
	}},
	{"a sync does not count a booking not yet sent", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 3}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}, {0, 0, true, 0}, {0, 0, true, 0}, {14, 5 * time.Second, true, time.Second}}) // booked at 15 s
		// The server's window opened at 13.5 s with 2 calls the budget did
		// not see; the call booked at 15 s is not among them.
		sync(t, s, k, l, 14, throttle.Burst, 2, 14500*time.Millisecond)
		reserves(t, s, k, l, []reserve{{14, 20 * time.Second, true, 14500 * time.Millisecond}}) // 13.5, 13.5 and 15 s in the span to 28.5 s
	}},
	{"timeline", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		reserves(t, s, k, throttle.Limit{Burst: 2, Sustain: 3}, []reserve{
			{0, 0, true, 0},
			{1, 0, true, 0},
			{2, 0, false, 13 * time.Second},
			{2, 20 * time.Second, true, 13 * time.Second}, // booked at 15 s
			{16, 0, false, 284 * time.Second},             // sustain: 3 in (16-300, 16]
			{300, 0, true, 0},
		})
	}},
	{"sustain only", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		reserves(t, s, k, throttle.Limit{Sustain: 2}, []reserve{
			{0, 0, true, 0},
			{0, 0, true, 0},
			{1, 0, false, 299 * time.Second},
		})
	}},
	{"burst only", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		reserves(t, s, k, throttle.Limit{Burst: 2}, []reserve{
			{0, 0, true, 0},
			{0, 0, true, 0},
			{1, 0, false, 14 * time.Second},
			{15, 0, true, 0},
			{15, 0, true, 0},
			{300, 0, true, 0},
		})
	}},
	{"margin lengthens both periods", time.Second, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		reserves(t, s, k, throttle.Limit{Burst: 1, Sustain: 2}, []reserve{
			{0, 0, true, 0},
			{15, 0, false, time.Second},
			{16, 0, true, 0},
			{300, 0, false, time.Second},
			{301, 0, true, 0},
		})
	}},
	{"out of order admissions count as the newest", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 2, Sustain: 10}
		reserves(t, s, k, l, []reserve{{2, 0, true, 0}, {1, 0, true, 0}}) // racing clocks
		snapshot(t, s, k, l, 16.5, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 2, Limit: 2, Reset: 500 * time.Millisecond}, Sustain: throttle.WindowState{Count: 2, Limit: 10, Reset: 285500 * time.Millisecond}},
			Wait:   500 * time.Millisecond,
		})
	}},
	{"block", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		// A block wins over the budget, and an earlier one never shortens it.
		l := throttle.Limit{Burst: 2, Sustain: 3}
		s.Block(context.Background(), k, at(0), at(30))
		s.Block(context.Background(), k, at(0), at(10))
		a, err := s.Reserve(context.Background(), k, l, at(1), 0)
		if err != nil || a.Allowed || !a.Blocked || a.Wait != 29*time.Second {
			t.Errorf("reserve while blocked = %+v, %v; want refused, blocked, 29s", a, err)
		}
		snapshot(t, s, k, l, 1, throttle.Snapshot{
			Counts:       throttle.Counts{Burst: throttle.WindowState{Limit: 2}, Sustain: throttle.WindowState{Limit: 3}},
			BlockedUntil: at(30),
			Wait:         29 * time.Second,
		})
		snapshot(t, s, k, l, 30, throttle.Snapshot{Counts: throttle.Counts{Burst: throttle.WindowState{Limit: 2}, Sustain: throttle.WindowState{Limit: 3}}})
		reserves(t, s, k, l, []reserve{{30, 0, true, 0}})
	}},
	{"a block keeps the admissions", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		// A server's Retry-After refuses calls for a while; the calls the
		// budget admitted before it still count when it ends.
		l := throttle.Limit{Burst: 2, Sustain: 3}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}, {1, 0, true, 0}})
		if err := s.Block(context.Background(), k, at(1), at(5)); err != nil {
			t.Fatal(err)
		}
		reserves(t, s, k, l, []reserve{{5, 0, false, 10 * time.Second}})
	}},
	{"a block ending as the budget frees a slot", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		// The wait is the budget's own, not reported as the server's.
		l := throttle.Limit{Burst: 1, Sustain: 10}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}})
		s.Block(context.Background(), k, at(0), at(15))
		a, err := s.Reserve(context.Background(), k, l, at(1), 0)
		if err != nil || a.Allowed || a.Blocked || a.Wait != 14*time.Second {
			t.Errorf("reserve = %+v, %v; want refused for 14s, not blocked", a, err)
		}
	}},
	{"snapshot at the spans' edges", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}, {1, 0, true, 0}})
		snapshot(t, s, k, l, 2, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 2, Limit: 10, Reset: 13 * time.Second}, Sustain: throttle.WindowState{Count: 2, Limit: 30, Reset: 298 * time.Second}},
		})
		snapshot(t, s, k, l, 15, throttle.Snapshot{
			Counts: throttle.Counts{
				Burst:   throttle.WindowState{Count: 1, Limit: 10, Reset: time.Second}, // the first leaves the burst span (0, 15]
				Sustain: throttle.WindowState{Count: 2, Limit: 30, Reset: 285 * time.Second},
			},
		})
	}},
	{"snapshot with a margin", time.Second, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}, {1, 0, true, 0}})
		snapshot(t, s, k, l, 15, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 2, Limit: 10, Reset: time.Second}, Sustain: throttle.WindowState{Count: 2, Limit: 30, Reset: 286 * time.Second}},
		})
	}},
	{"sync records what the service counted", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}})
		sync(t, s, k, l, 1, throttle.Burst, 10, 5*time.Second)
		snapshot(t, s, k, l, 1, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 10, Limit: 10, Reset: 5 * time.Second}, Sustain: throttle.WindowState{Count: 10, Limit: 30, Reset: 290 * time.Second}},
			Wait:   5 * time.Second,
		})
		sync(t, s, k, l, 1, throttle.Burst, 2, 5*time.Second) // a report of fewer changes nothing
		sync(t, s, k, l, 1, throttle.None, 20, 5*time.Second) // nor one of no window
		snapshot(t, s, k, l, 1, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 10, Limit: 10, Reset: 5 * time.Second}, Sustain: throttle.WindowState{Count: 10, Limit: 30, Reset: 290 * time.Second}},
			Wait:   5 * time.Second,
		})
	}},
	{"sync of a window that opens now", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		sync(t, s, k, l, 0, throttle.Burst, 10, throttle.BurstPeriod)
		snapshot(t, s, k, l, 0, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 10, Limit: 10, Reset: 15 * time.Second}, Sustain: throttle.WindowState{Count: 10, Limit: 30, Reset: 300 * time.Second}},
			Wait:   15 * time.Second,
		})
	}},
	{"sync of a window that has ended", time.Second, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		sync(t, s, k, l, 20, throttle.Burst, 10, 0)
		snapshot(t, s, k, l, 20, throttle.Snapshot{Counts: throttle.Counts{Burst: throttle.WindowState{Limit: 10}, Sustain: throttle.WindowState{Limit: 30}}})
	}},
	{"sync leaves out admissions older than the window", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 30}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}})
		sync(t, s, k, l, 20, throttle.Burst, 3, 10*time.Second) // the window opened at 15 s
		snapshot(t, s, k, l, 20, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 3, Limit: 10, Reset: 10 * time.Second}, Sustain: throttle.WindowState{Count: 4, Limit: 30, Reset: 280 * time.Second}},
		})
	}},
	{"sync counts an admission a second before the window", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		// The service rounds reset up to whole seconds: its window may have
		// opened up to a second before the one it reports.
		l := throttle.Limit{Burst: 10, Sustain: 30}
		reserves(t, s, k, l, []reserve{{0, 0, true, 0}})
		sync(t, s, k, l, 1, throttle.Burst, 1, throttle.BurstPeriod)
		snapshot(t, s, k, l, 1, throttle.Snapshot{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: 1, Limit: 10, Reset: 14 * time.Second}, Sustain: throttle.WindowState{Count: 1, Limit: 30, Reset: 299 * time.Second}},
		})
	}},
	{"release", -1, release},
	{"a booking under a smaller limit keeps the admissions a larger one counts", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		// Two transports of other LimitShares on one store: the smaller
		// one's booking ahead must not forget the admissions the whole
		// limit still counts.
		whole, half := throttle.Limit{Sustain: 4}, throttle.Limit{Sustain: 2}
		reserves(t, s, k, whole, []reserve{{0, 0, true, 0}, {1, 0, true, 0}, {2, 0, true, 0}, {3, 0, true, 0}})
		reserves(t, s, k, half, []reserve{{4, 400 * time.Second, true, 298 * time.Second}}) // 2 s + 300 s
		reserves(t, s, k, whole, []reserve{{5, 0, false, 296 * time.Second}})               // the 4th newest, at 1 s (the booking counts)
	}},
	{"a sync under a smaller limit records what the larger one counts", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		// The service reports 30 counted to the half share's transport:
		// all 29 missing are recorded, not the half's 15.
		whole, half := throttle.Limit{Burst: 10, Sustain: 30}, throttle.Limit{Burst: 5, Sustain: 15}
		reserves(t, s, k, whole, []reserve{{0, 0, true, 0}})
		sync(t, s, k, half, 10, throttle.Sustain, 30, 290*time.Second) // the window opened at 0 s
		reserves(t, s, k, whole, []reserve{{20, 0, false, 280 * time.Second}})
	}},
	{"a sync under a smaller limit keeps the admissions a larger one counts", -1, func(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
		l := throttle.Limit{Burst: 10, Sustain: 20}
		for i := range 10 {
			reserves(t, s, k, l, []reserve{{float64(i) * 0.1, 0, true, 0}})
		}
		for i := range 10 {
			reserves(t, s, k, l, []reserve{{20 + float64(i)*0.1, 0, true, 0}})
		}
		sync(t, s, k, throttle.Limit{Burst: 10}, 40, throttle.Burst, 1, 10*time.Second)
		// The 20th newest (the sync adds one at 35 s) is the one at 0.1 s.
		reserves(t, s, k, l, []reserve{{40, 0, false, 260100 * time.Millisecond}})
	}},
}

func reserves(t *testing.T, s throttle.BudgetStore, k throttle.Key, l throttle.Limit, rs []reserve) {
	t.Helper()
	for i, r := range rs {
		a, err := s.Reserve(context.Background(), k, l, at(r.at), r.maxWait)
		if err != nil {
			t.Fatalf("reserve %d: %v", i, err)
		}
		got := reserve{r.at, r.maxWait, a.Allowed, a.Wait}
		if diff := cmp.Diff(r, got, cmp.AllowUnexported(reserve{})); diff != "" {
			t.Errorf("reserve %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}

func sync(t *testing.T, s throttle.BudgetStore, k throttle.Key, l throttle.Limit, when float64, p throttle.Period, used int, reset time.Duration) {
	t.Helper()
	if err := s.Sync(context.Background(), k, l, at(when), p, used, reset); err != nil {
		t.Fatal(err)
	}
}

func snapshot(t *testing.T, s throttle.BudgetStore, k throttle.Key, l throttle.Limit, when float64, want throttle.Snapshot) {
	t.Helper()
	got, err := s.Snapshot(context.Background(), k, l, at(when))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Snapshot at %v s mismatch (-want +got):\n%s", when, diff)
	}
}

// release: a booked slot given back no longer counts; an unknown slot
// changes nothing.
func release(t *testing.T, s throttle.BudgetStore, k throttle.Key) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 2, Sustain: 3}
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
