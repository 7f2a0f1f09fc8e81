package throttle_test

// An outside attack on the accounting core (attack79): Reserve and Release.

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: BudgetStore.Release, restated after this test (it was
// TestAttack79ReleaseTwiceTakesBackAnotherCallsSlot: a second Release of one
// slot gave back another call's booking, which the godoc did not say):
// "Each slot goes back once: two calls booked at one instant may hold
// equal slots (a MemoryBudgetStore's are the instant)". Two calls booked
// at one instant hold equal slots; A's given back once, B sent: under
// burst 2 one more call goes within the second, not two.
func TestAttack79ReleaseTwiceTakesBackAnotherCallsSlot(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{Margin: -1}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 2, Sustain: 100}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, _ := b.Reserve(ctx, k, l, t0, 0)
	bb, _ := b.Reserve(ctx, k, l, t0, 0)
	if !a.Allowed || !bb.Allowed || a.Slot != bb.Slot || a.Slot == 0 {
		t.Fatalf("bookings at one instant: %+v %+v; want both allowed, equal non-zero slots", a, bb)
	}
	b.Release(ctx, k, l, a.Slot) // A not sent, given back once
	sent := 1                    // B
	for i := range 3 {
		if c, _ := b.Reserve(ctx, k, l, t0.Add(time.Duration(i+1)*100*time.Millisecond), 0); c.Allowed {
			sent++
		}
	}
	if sent != l.Burst {
		t.Errorf("%d calls sent within 0.3 s under burst %d; want %d", sent, l.Burst, l.Burst)
	}
}

// held: BudgetStore.Reserve: "maxWait 0 admits now or never"; a call booked
// ahead (maxWait) and given back once frees exactly one slot: with burst 2,
// two sent, one booked ahead and released, the next call still waits for
// the first admissions to leave the span.
func TestAttack79ReleaseOnceFreesOneHeld(t *testing.T) {
	ctx := context.Background()
	b := &throttle.MemoryBudgetStore{Margin: -1}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 2, Sustain: 100}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Reserve(ctx, k, l, t0, 0)
	b.Reserve(ctx, k, l, t0.Add(time.Second), 0)
	ahead, _ := b.Reserve(ctx, k, l, t0.Add(2*time.Second), time.Minute)
	if !ahead.Allowed || ahead.Wait != 13*time.Second {
		t.Fatalf("booking ahead: %+v; want allowed, Wait 13s", ahead)
	}
	b.Release(ctx, k, l, ahead.Slot)
	if c, _ := b.Reserve(ctx, k, l, t0.Add(3*time.Second), 0); c.Allowed || c.Wait != 12*time.Second {
		t.Errorf("after the release: %+v; want refused, Wait 12s", c)
	}
	if c, _ := b.Reserve(ctx, k, l, t0.Add(15*time.Second), 0); !c.Allowed {
		t.Errorf("at 15 s: %+v; want admitted", c)
	}
}
