package throttle_test

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

var attack84Key = throttle.Key{User: "u", Title: "t", Scope: "s"}

// attack84T is a whole second in 2026.
var attack84T = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestAttack84BudgetSpanSubMicroBeforeWindowEnd: with no margin, a second call
// 1 ns / 999 ns / 1 µs before the first leaves the burst span.
//
// BudgetStore's godoc: "A budget admits a call at t only if fewer than
// Burst admissions lie in (t-BurstPeriod-margin, t] and fewer than Sustain
// in (t-SustainPeriod-margin, t], so no span of a period ever holds more
// than its limit". The memory store floors both times to whole
// microseconds ("to the microsecond"), which moves an admission's end up to
// 999 ns earlier: a call whose span still holds the first is admitted.
func TestAttack84BudgetSpanSubMicroBeforeWindowEnd(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	for _, c := range []struct {
		name        string
		first, gap  time.Duration // first's offset from attack84T, then the second call's offset from the first
		wantAllowed bool
	}{
		{"first at +500ns, second 1ns before its span ends", 500, throttle.BurstPeriod - 1, false},
		{"first at +999ns, second 999ns before its span ends", 999, throttle.BurstPeriod - 999, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{Margin: -1}
			a1, _ := b.Reserve(ctx, attack84Key, l, attack84T.Add(c.first), 0)
			if !a1.Allowed {
				t.Fatal("first call refused")
			}
			a2, _ := b.Reserve(ctx, attack84Key, l, attack84T.Add(c.first+c.gap), 0)
			if a2.Allowed != c.wantAllowed {
				t.Errorf("second call %v after the first (burst 1, no margin): Allowed=%v, the rule says %v (Wait %v)", c.gap, a2.Allowed, c.wantAllowed, a2.Wait)
			}
		})
	}
}

// TestAttack84BudgetMarginNotWholeMicro: a margin of 1,999 ns.
//
// MemoryBudgetStore.Margin: "Margin lengthens both periods"; BudgetStore:
// "admits a call at t only if fewer than Burst admissions lie in
// (t-BurstPeriod-margin, t]". The margin is truncated to 1 µs and the
// admission floored: a call 2 µs before the lengthened span ends (an
// error of twice the store's stated microsecond) is admitted.
func TestAttack84BudgetMarginNotWholeMicro(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	const margin = 1999 * time.Nanosecond
	b := &throttle.MemoryBudgetStore{Margin: margin}
	first := attack84T.Add(999)
	if a, _ := b.Reserve(ctx, attack84Key, l, first, 0); !a.Allowed {
		t.Fatal("first call refused")
	}
	end := first.Add(throttle.BurstPeriod + margin) // the first leaves the span after this
	at := attack84T.Add(throttle.BurstPeriod + time.Microsecond)
	a, _ := b.Reserve(ctx, attack84Key, l, at, 0)
	if a.Allowed {
		t.Errorf("a call %v before the first call's span (15 s + %v margin) ends was admitted (burst 1)", end.Sub(at), margin)
	}
}

// TestAttack84BudgetBlockEndsBeforeUntil: Block until a time that is not a
// whole microsecond (now + a Retry-After, now read with nanoseconds).
//
// BudgetStore: "Block refuses calls for k from now until until (a server
// Retry-After)." and Snapshot: "BlockedUntil is the server's Retry-After
// deadline". The store keeps until floored to the microsecond: a call
// 1 ns after that (still before until) is admitted, and BlockedUntil is
// not until.
func TestAttack84BudgetBlockEndsBeforeUntil(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 10, Sustain: 100}
	now := attack84T.Add(123_456_789)
	until := now.Add(10 * time.Second) // .123456789 s
	t.Run("call before until", func(t *testing.T) {
		b := &throttle.MemoryBudgetStore{}
		b.Block(ctx, attack84Key, now, until)
		at := until.Add(-700) // .123456089: 700 ns before until, past its microsecond
		a, _ := b.Reserve(ctx, attack84Key, l, at, 0)
		if a.Allowed {
			t.Errorf("a call %v before the block's end was admitted", until.Sub(at))
		}
	})
	t.Run("Snapshot.BlockedUntil", func(t *testing.T) {
		b := &throttle.MemoryBudgetStore{}
		b.Block(ctx, attack84Key, now, until)
		s, _ := b.Snapshot(ctx, attack84Key, l, now)
		if !s.BlockedUntil.Equal(until) {
			t.Errorf("BlockedUntil %v, the block's until %v (%v early)", s.BlockedUntil.UTC().Format(time.RFC3339Nano), until.Format(time.RFC3339Nano), until.Sub(s.BlockedUntil))
		}
	})
}

// TestAttack84BudgetSyncResetNotWholeMicro: a Sync whose now and reset carry
// nanoseconds.
//
// BudgetStore.Sync: "used requests in a window of period p that ends in
// reset. When the server has counted more than the budget holds for that
// window, the missing requests are recorded at the window's start". The
// window starts at now+reset-p; the store records them up to 2 µs before
// it (now and reset each floored), so with no margin a call 1 µs before
// the server's window ends (the recorded requests' span not yet over) is
// admitted.
func TestAttack84BudgetSyncResetNotWholeMicro(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	b := &throttle.MemoryBudgetStore{Margin: -1}
	now := attack84T.Add(999)
	reset := 10*time.Second + 999
	b.Sync(ctx, attack84Key, l, now, throttle.Burst, 1, reset)
	start := now.Add(reset - throttle.BurstPeriod)
	end := start.Add(throttle.BurstPeriod) // = now + reset
	at := end.Add(-1998)                   // still inside: the synced request lies in (at-15s, at]
	a, _ := b.Reserve(ctx, attack84Key, l, at, 0)
	if a.Allowed {
		t.Errorf("a call %v before the synced window ends (the window opened at %v) was admitted", end.Sub(at), start.Format(time.RFC3339Nano))
	}
}

// TestAttack84ServerFirstRequestWindowSubMicro: MemoryServerStore, FirstRequest.
//
// ServerStore: "each key has a fixed burst window and a fixed sustain
// window (starting as Align says)"; FirstRequest "starts each window at the
// first request counted after the previous window of its kind ended".
// Decision.RetryAfter: "the time until the Limiter's window ends". A
// window opened by a request at +500 ns is taken to end up to 999 ns early:
// a request 1 ns before its end opens a new window and is served.
func TestAttack84ServerFirstRequestWindowSubMicro(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	first := attack84T.Add(500)
	t.Run("served inside the window", func(t *testing.T) {
		s := &throttle.MemoryServerStore{}
		s.Take(ctx, attack84Key, l, first)
		d, _ := s.Take(ctx, attack84Key, l, first.Add(throttle.BurstPeriod-1))
		if d.Allowed {
			t.Errorf("a request 1 ns before the window opened at %v ends was served (burst 1)", first.Format(time.RFC3339Nano))
		}
	})
	t.Run("RetryAfter", func(t *testing.T) {
		s := &throttle.MemoryServerStore{}
		s.Take(ctx, attack84Key, l, first)
		now := attack84T.Add(time.Second)
		d, _ := s.Take(ctx, attack84Key, l, now)
		want := first.Add(throttle.BurstPeriod).Sub(now)
		if d.Allowed || d.RetryAfter != want {
			t.Errorf("Allowed=%v RetryAfter %v; the window ends in %v", d.Allowed, d.RetryAfter, want)
		}
	})
}

// held: at whole-microsecond edges (and 1 ns before a whole-microsecond
// end) the memory budget decides as BudgetStore's rule says: "admits a call
// at t only if fewer than Burst admissions lie in (t-BurstPeriod-margin, t]".
func TestAttack84BudgetSpanWholeMicroEdgesHeld(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	for _, c := range []struct {
		name        string
		first, gap  time.Duration
		wantAllowed bool
	}{
		{"first at +0, second 1µs before its span ends", 0, throttle.BurstPeriod - time.Microsecond, false},
		{"first at +0, second 1ns before its span ends", 0, throttle.BurstPeriod - 1, false},
		{"first at +0, second at the span's end", 0, throttle.BurstPeriod, true},
		{"first at +500ns, second at the span's end", 500, throttle.BurstPeriod, true},
		{"first at +500ns, second 1µs past it", 500, throttle.BurstPeriod + time.Microsecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{Margin: -1}
			if a, _ := b.Reserve(ctx, attack84Key, l, attack84T.Add(c.first), 0); !a.Allowed {
				t.Fatal("first call refused")
			}
			a2, _ := b.Reserve(ctx, attack84Key, l, attack84T.Add(c.first+c.gap), 0)
			if a2.Allowed != c.wantAllowed {
				t.Errorf("second call %v after the first: Allowed=%v, want %v", c.gap, a2.Allowed, c.wantAllowed)
			}
		})
	}
}

// TestAttack84SyncCountsABookingNotYetSentAsServerCounted: a call booked ahead
// (Reserve with a wait, not yet sent) is taken by Sync as one of the
// requests the server reported.
//
// BudgetStore.Sync: "Sync absorbs a server's report of one window: used
// requests in a window of period p that ends in reset. When the server has
// counted more than the budget holds for that window, the missing requests
// are recorded at the window's start"; the package: "a caller that
// respects it is safe whatever window alignment the service uses". At T
// the server reports 2 requests in its burst window (opened at T-0.5 s by
// this user's other clients); the budget holds none of them, only a call
// booked for T+2 s, which the server cannot have counted. Sync records 1,
// not 2, and the budget then books a 4th call into a window whose limit is
// 3 (the server's 2, the booking, this one).
func TestAttack84SyncCountsABookingNotYetSentAsServerCounted(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 3}
	b := &throttle.MemoryBudgetStore{} // DefaultMargin, 1 s
	T := attack84T
	for range 3 {
		b.Reserve(ctx, attack84Key, l, T.Add(-14*time.Second), 0)
	}
	booked, _ := b.Reserve(ctx, attack84Key, l, T, time.Minute)
	if !booked.Allowed || booked.Wait != 2*time.Second {
		t.Fatalf("booking %+v", booked)
	}
	b.Sync(ctx, attack84Key, l, T, throttle.Burst, 2, 14500*time.Millisecond) // the server's window: [T-0.5s, T+14.5s)
	a, _ := b.Reserve(ctx, attack84Key, l, T, 10*time.Second)
	if a.Allowed {
		t.Errorf("after the server reported 2 of its 3 in a window that also gets the call booked at T+2s, another call was booked at T+%v (inside that window, ending T+14.5s)", a.Wait)
	}
}
