package throttle_test

// An outside attack on the accounting core (attack79): the instants at the
// ends of what a now can be. Only the exported API.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// lastInstant is the last instant time.UnixNano names (2262-04-11): every
// now used below is one UnixNano represents exactly.
var lastInstant = time.Unix(0, math.MaxInt64)

// firstInstant is the first instant time.UnixNano names (1677-09-21).
var firstInstant = time.Unix(0, math.MinInt64)

// ServerStore (throttle.go): "each key has a fixed burst window and a fixed
// sustain window ...; a request is refused when either count is already at
// or over its limit, and every request, refused or not, increments both
// counts." Package doc: "every decision takes the current time as an
// argument, so it can be driven by real time, by a testing/synctest
// bubble, or by a simulation."
//
// A simulation's clock 10 s before the last instant UnixNano names: a
// request opens the burst window [T, T+15 s); a second one 1 s later is in
// that window with a count of 1 already, under burst 1. The window's end
// overflows int64, so every request opens a new window: served.
func TestAttack79ServerFarFutureWindowNeverCloses(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	t0 := lastInstant.Add(-10 * time.Second)
	if d, _ := s.Take(ctx, k, l, t0); !d.Allowed {
		t.Fatalf("first request refused: %+v", d)
	}
	for i := 1; i <= 5; i++ {
		d, _ := s.Take(ctx, k, l, t0.Add(time.Duration(i)*100*time.Millisecond))
		if d.Allowed || d.Limiter != throttle.Burst {
			t.Errorf("request %d, %v after the first, under burst 1: %+v; want refused by burst", i+1, time.Duration(i)*100*time.Millisecond, d)
		}
	}
}

// Same promise as above, at the other end: a simulation's clock 1 s after
// the first instant UnixNano names (1677). The window's start less a
// period (the rule that lets a request stamped a little before its
// window count in it) underflows int64, so the second request, 1 s into
// the window, restarts it: served under burst 1.
func TestAttack79ServerFarPastWindowRestarts(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	t0 := firstInstant.Add(time.Second)
	if d, _ := s.Take(ctx, k, l, t0); !d.Allowed {
		t.Fatalf("first request refused: %+v", d)
	}
	d, _ := s.Take(ctx, k, l, t0.Add(time.Second))
	if d.Allowed || d.Burst.Count != 2 {
		t.Errorf("second request 1 s into a burst window of limit 1: %+v; want refused, burst count 2", d)
	}
}

// BudgetStore (throttle.go): "A budget admits a call at t only if fewer
// than Burst admissions lie in (t-BurstPeriod-margin, t] ... so no span of
// a period ever holds more than its limit".
//
// At 10 s before the last instant UnixNano names, the end of an
// admission's span overflows: under burst 1, every call is admitted at
// once.
func TestAttack79BudgetFarFutureAdmitsEverything(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	t0 := lastInstant.Add(-10 * time.Second)
	if a, _ := b.Reserve(ctx, k, l, t0, 0); !a.Allowed {
		t.Fatalf("first call refused: %+v", a)
	}
	admitted := 0
	for i := 1; i <= 5; i++ {
		if a, _ := b.Reserve(ctx, k, l, t0.Add(time.Duration(i)*100*time.Millisecond), 0); a.Allowed {
			admitted++
		}
	}
	if admitted > 0 {
		t.Errorf("%d more calls admitted within 0.5 s under burst 1", admitted)
	}
}

// BudgetStore (throttle.go): "A budget admits a call at t only if fewer
// than Burst admissions lie in (t-BurstPeriod-margin, t] and fewer than
// Sustain in (t-SustainPeriod-margin, t]"; Admission.Blocked: "the wait
// comes from a server Retry-After"; BudgetStore.Block is the only way to
// block. Package doc: "every decision takes the current time as an
// argument, so it can be driven by ... a simulation."
//
// A key never called and never blocked, at a now before 1970 (a simulation
// of 1969, or one whose clock starts at the Unix epoch less a minute): the
// first call is refused as Blocked by a Retry-After, until 1970. (A fresh
// key's block deadline is 0 ns: the epoch.)
func TestAttack79BudgetBefore1970FreshKeyBlocked(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 100}
	now := time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)
	a, _ := b.Reserve(ctx, k, l, now, 0)
	if !a.Allowed {
		t.Errorf("first call of a fresh key at %v: %+v; want admitted", now, a)
	}
	snap, _ := b.Snapshot(ctx, throttle.Key{User: "other"}, l, now)
	if snap.Wait != 0 || !snap.BlockedUntil.IsZero() {
		t.Errorf("Snapshot of a key never used at %v: %+v; want Wait 0, no BlockedUntil", now, snap)
	}
}

// BudgetStore.Block (throttle.go): "Block refuses calls for k from now
// until until (a server Retry-After)"; Admission.Wait: "when not allowed,
// the time until a call would be admitted".
//
// A simulation whose clock starts at the zero time (time.Time{}, year 1):
// a Retry-After of 60 s, then a call 1 s later: the wait told is not the
// 59 s left of the block, but 215 years (to 1970), and the call a
// minute after the block ended is still refused.
func TestAttack79BudgetBlockAtZeroTimeWait(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 100}
	var zero time.Time
	if err := b.Block(ctx, k, zero, zero.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	a, _ := b.Reserve(ctx, k, l, zero.Add(time.Second), 0)
	if a.Allowed || !a.Blocked || a.Wait != 59*time.Second {
		t.Errorf("Reserve 1 s into a 60 s block from the zero time: %+v; want refused, Blocked, Wait 59s", a)
	}
	if a, _ := b.Reserve(ctx, k, l, zero.Add(2*time.Minute), 0); !a.Allowed {
		t.Errorf("Reserve a minute after the block ended: %+v; want admitted", a)
	}
}

// held: the server store with a clock at the zero time: burst 1 refuses
// a second request 1 s after the first, with a Retry-After of 14 s.
func TestAttack79ServerZeroTimeHeld(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	var zero time.Time
	if d, _ := s.Take(ctx, k, l, zero); !d.Allowed {
		t.Fatalf("first request refused: %+v", d)
	}
	d, _ := s.Take(ctx, k, l, zero.Add(time.Second))
	if d.Allowed || d.RetryAfter != 14*time.Second {
		t.Errorf("server's second request: %+v; want refused, RetryAfter 14s", d)
	}
}

// Admission.Slot (sliding.go): "Slot identifies the booked slot, when
// allowed, for a store's Release ... zero when nothing was booked."
//
// A call booked at the Unix epoch (storetest's "first window near the Unix
// epoch" starts a simulation there) is booked with Slot 0: by the doc,
// nothing was booked, and a caller that gives back only non-zero slots
// never gives this one back (the count leaks); a caller that gives back
// a refused call's zero slot takes back this booking.
func TestAttack79SlotZeroAtEpochIsBooked(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{Margin: -1}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	a, _ := b.Reserve(ctx, k, l, time.Unix(0, 0), 0)
	if !a.Allowed {
		t.Fatalf("first call refused: %+v", a)
	}
	if a.Slot == 0 {
		t.Errorf("a booked call's Admission = %+v: Slot 0, which the doc says means nothing was booked", a)
	}
	// The refused call's Slot is 0 too; giving it back frees the booking.
	r, _ := b.Reserve(ctx, k, l, time.Unix(1, 0), 0)
	if r.Allowed {
		t.Fatalf("second call admitted under burst 1: %+v", r)
	}
	b.Release(ctx, k, l, r.Slot)
	if c, _ := b.Reserve(ctx, k, l, time.Unix(2, 0), 0); c.Allowed {
		t.Errorf("giving back a refused call's Slot (%d, 'nothing was booked') freed the epoch booking: a third call admitted under burst 1", r.Slot)
	}
}
