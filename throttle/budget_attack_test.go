package throttle_test

// An outside attack on the accounting core (attack100): only the exported API.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

var attackBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func attackAt(s float64) time.Time { return attackBase.Add(time.Duration(s * float64(time.Second))) }

// attackSent counts the admissions sent in (t-span, t].
func attackSent(sent []time.Time, t time.Time, span time.Duration) int {
	c := 0
	for _, s := range sent {
		if s.After(t.Add(-span)) && !s.After(t) {
			c++
		}
	}
	return c
}

// BudgetStore (throttle.go): "A budget admits a call at t only if fewer than
// Burst admissions lie in (t-BurstPeriod-margin, t] and fewer than Sustain in
// (t-SustainPeriod-margin, t], so no span of a period ever holds more than its
// limit, whatever alignment the server's fixed windows use ... Several
// transports share one store on purpose, so that together they stay within
// one budget."
//
// Two callers share one store for one key with different limits (a
// transport with LimitShare 0.5 beside one with the whole limit). The
// smaller one books a slot ahead (maxWait 400 s); booking it cuts the key's
// ring of times to the smaller limit, forgetting admissions still inside
// the sustain span, and the next call under the whole limit is admitted at
// once with 4 admissions already in its span of limit 4.
func TestAttackSmallerLimitBookingForgetsAdmissions(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	whole, half := throttle.Limit{Sustain: 4}, throttle.Limit{Sustain: 2}
	var sent []time.Time
	for i := range 4 {
		a, _ := b.Reserve(ctx, k, whole, attackAt(float64(i)), 0)
		if !a.Allowed {
			t.Fatalf("call %d refused: %+v", i, a)
		}
		sent = append(sent, attackAt(float64(i)))
	}
	if a, _ := b.Reserve(ctx, k, half, attackAt(4), 400*time.Second); !a.Allowed {
		t.Fatalf("the booking ahead was refused: %+v", a)
	}
	now := attackAt(5)
	a, _ := b.Reserve(ctx, k, whole, now, 0)
	if in := attackSent(sent, now, throttle.SustainPeriod+throttle.DefaultMargin); a.Allowed && in >= whole.Sustain {
		t.Errorf("admitted at 5 s under sustain %d with %d admissions already in its span: %+v", whole.Sustain, in, a)
	}
}

// BudgetStore.Sync (throttle.go): "When the server has counted more than the
// budget holds for that window, the missing requests are recorded at the
// window's start; a report of fewer changes nothing, so the budget only
// ever becomes stricter."
//
// A Sync that carries a smaller limit than the calls were booked under (a
// second transport on the store with a smaller share, or a burst-only
// limit) drops the admissions the ring cannot hold under it: the budget
// becomes looser, and the next call under the whole limit is admitted.
func TestAttackSyncWithSmallerLimitLoosens(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 20}
	for i := range 20 {
		sec := float64(i%10) * 0.1
		if i >= 10 {
			sec += 20
		}
		if a, _ := b.Reserve(ctx, k, l, attackAt(sec), 0); !a.Allowed {
			t.Fatalf("call %d refused: %+v", i, a)
		}
	}
	before, _ := b.Snapshot(ctx, k, l, attackAt(40))
	// The server reports its burst window at 40 s: 1 request (one this
	// budget does not hold), window ending in 10 s. Its limit: burst only.
	if err := b.Sync(ctx, k, throttle.Limit{Burst: 10}, attackAt(40), throttle.Burst, 1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	after, _ := b.Snapshot(ctx, k, l, attackAt(40))
	if after.Sustain.Count < before.Sustain.Count {
		t.Errorf("Sync loosened the budget: sustain count %d before, %d after", before.Sustain.Count, after.Sustain.Count)
	}
	if a, _ := b.Reserve(ctx, k, l, attackAt(40), 0); a.Allowed {
		t.Errorf("after the Sync, a call under sustain 20 was admitted with 21 in its span: %+v", a)
	}
}

// MaxLimit (throttle.go): "MaxLimit bounds every limit: a client budget keeps
// one timestamp per request allowed"; BudgetStore: "A budget admits a call
// at t only if fewer than Burst admissions lie in (t-BurstPeriod-margin, t]".
//
// A limit over MaxLimit is not held to MaxLimit: the ring holds MaxLimit
// times, never reaches the limit, and the limit is off altogether.
func TestAttackLimitOverMaxLimitIsNoLimit(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: throttle.MaxLimit + 1}
	n := 0
	for range 2*throttle.MaxLimit + 2 {
		if a, _ := b.Reserve(ctx, k, l, attackBase, 0); a.Allowed {
			n++
		}
	}
	if n > l.Burst {
		t.Errorf("%d calls admitted at one instant under burst %d", n, l.Burst)
	}
}

// MemoryBudgetStore.Margin: "Margin lengthens both periods"; BudgetStore: "no
// span of a period ever holds more than its limit".
//
// A huge margin overflows the end of the span: the limit is off.
func TestAttackHugeMarginOverflows(t *testing.T) {
	ctx := context.Background()
	b := throttle.MemoryBudgetStore{Margin: time.Duration(math.MaxInt64)}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	n := 0
	for i := range 3 {
		if a, _ := b.Reserve(ctx, k, l, attackAt(float64(i)), 0); a.Allowed {
			n++
		}
	}
	if n > 1 {
		t.Errorf("margin %v: %d calls admitted in 3 s under burst 1", b.Margin, n)
	}
}

// BudgetStore.Block (throttle.go): "Block refuses calls for k from now until
// until (a server Retry-After)."
//
// An until past 2262 (a Retry-After date far ahead) wraps in UnixNano and
// refuses nothing.
func TestAttackBlockFarAheadRefusesNothing(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	until := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Block(ctx, k, attackBase, until)
	if a, _ := b.Reserve(ctx, k, l, attackAt(1), 0); a.Allowed {
		t.Errorf("a call admitted 1 s into a block until %v: %+v", until, a)
	}
}

// BudgetStore.Block: "Block refuses calls for k from now until until"; a
// block that has ended refuses nothing (storetest "block": at 30 s, after
// a block until 30 s, a call is admitted).
//
// An until before 1678 wraps in UnixNano to a time ahead: a block that
// ended centuries ago refuses calls for an hour.
func TestAttackBlockLongPastRefuses(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	// 2^64 ns before an hour from now: UnixNano wraps it to an hour from now.
	until := attackBase.Add(time.Hour).Add(-math.MaxInt64).Add(-math.MaxInt64).Add(-2)
	if !until.Before(attackBase) {
		t.Fatalf("until %v is not in the past", until)
	}
	b.Block(ctx, k, attackBase, until)
	if a, _ := b.Reserve(ctx, k, l, attackAt(1), 0); !a.Allowed {
		t.Errorf("a block until %v refuses a call in 2026: %+v", until, a)
	}
}
