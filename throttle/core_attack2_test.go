package throttle_test

// An outside attack (attack2102) on 78d0c78's fixes to the accounting core:
// only the exported API.

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

var attack2Base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func attack2T(s float64) time.Time { return attack2Base.Add(time.Duration(s * float64(time.Second))) }

// BudgetStore.Sync (throttle.go): "When the server has counted more than
// the budget holds for that window, the missing requests are recorded at
// the window's start; a report of fewer changes nothing, so the budget
// only ever becomes stricter." BudgetStore: "Several transports share one
// store on purpose, so that together they stay within one budget."
// RELIABILITY.md (78d0c78): "a key's ring never shrinks while it lives (it
// is sized by the largest limit it has been given)".
//
// Two transports share a key: the whole limit (sustain 8) and a half share
// (sustain 4). The whole one makes 4 calls: the ring has grown to 4 (it
// doubles 1, 4, 8 as calls come), not to the largest limit given (8). The
// service then reports, to the half transport, 6 counted in its sustain
// window (2 from another process). The Sync inserts the 2 at the window's
// start and keeps the newest 4 of the ring's 4: the 2 are dropped at once.
// The whole transport is then admitted 4 more calls: 8 of its own and 2
// others in one sustain window of limit 8, 429s at the service.
func TestAttack2SyncIntoUngrownRingDropsTheMissing(t *testing.T) {
	ctx := context.Background()
	b := throttle.MemoryBudgetStore{Margin: -1}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	whole, half := throttle.Limit{Sustain: 8}, throttle.Limit{Sustain: 4}
	for i := range 4 {
		if a, _ := b.Reserve(ctx, k, whole, attack2T(float64(i)), 0); !a.Allowed {
			t.Fatalf("call %d refused: %+v", i, a)
		}
	}
	// Sustain window [0 s, 300 s): at 10 s it ends in 290 s; 6 counted.
	b.Sync(ctx, k, half, attack2T(10), throttle.Sustain, 6, 290*time.Second)
	if s, _ := b.Snapshot(ctx, k, whole, attack2T(10)); s.Sustain.Count < 6 {
		t.Errorf("after a Sync of 6 counted, the budget holds %d in the sustain span (the missing 2 not recorded)", s.Sustain.Count)
	}
	n := 4
	for i := range 4 {
		if a, _ := b.Reserve(ctx, k, whole, attack2T(float64(11+i)), 0); a.Allowed {
			n++
		}
	}
	if n+2 > whole.Sustain {
		t.Errorf("%d calls of the whole transport admitted in 14 s beside the 2 the service reported: %d in one sustain window of limit %d", n, n+2, whole.Sustain)
	}
}

// ServerStore (throttle.go): "each key has a fixed burst window and a
// fixed sustain window"; BurstPeriod = 15 s; Decision.RetryAfter: "the
// time until the Limiter's window ends"; SPEC: burst 15 s fixed windows.
//
// The mock's clock steps back 1000 s (its now is the wall clock: an NTP
// step, a VM resumed) after a request opened the burst window at 1000 s.
// Requests then come 20 s apart, more than a burst period: no fixed 15 s
// window can hold two of them, and the service serves each under burst 1.
// Since 78d0c78 a request stamped before the window's start counts in it
// whatever the gap, so the window [1000 s, 1015 s) counts them all, refuses
// them for 1015 s of the clock, and answers a Retry-After of 1015 s for a
// 15 s window.
func TestAttack2ServerClockStepBackFreezesWindow(t *testing.T) {
	ctx := context.Background()
	for _, align := range []throttle.Align{throttle.FirstRequest, throttle.ClockAligned} {
		s := throttle.MemoryServerStore{Align: align}
		k := throttle.Key{User: "u", Title: "t", Scope: "s"}
		l := throttle.Limit{Burst: 1, Sustain: 100}
		s.Take(ctx, k, l, attack2T(1000))
		refused := 0
		for i := range 5 {
			d, _ := s.Take(ctx, k, l, attack2T(float64(20*i)))
			if !d.Allowed {
				refused++
			}
			if d.RetryAfter > throttle.BurstPeriod || d.Burst.Reset > throttle.BurstPeriod {
				t.Errorf("align %d, request at %d s: RetryAfter %v, burst reset %v: longer than the %v window", align, 20*i, d.RetryAfter, d.Burst.Reset, throttle.BurstPeriod)
				break
			}
		}
		if refused > 1 {
			t.Errorf("align %d: %d of 5 requests 20 s apart refused under burst 1 (at most the first shares a window)", align, refused)
		}
	}
}

// BudgetStore.Block: "Block refuses calls for k from now until until";
// 78d0c78: "a Block past 2262 ... held to the instants UnixNano names".
//
// A block until 3000 is held to 2262; a call at a now just before 1970
// (a simulation's clock near the epoch, as storetest's "first window near
// the Unix epoch" uses) is then admitted: the block's end less now
// overflows, and the Wait is negative.
func TestAttack2BlockFarAheadBeforeEpochAdmits(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	now := time.Unix(-1, 0)
	b.Block(ctx, k, now, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if a, _ := b.Reserve(ctx, k, l, now.Add(time.Second/2), 0); a.Allowed || a.Wait < 0 {
		t.Errorf("a call during a block until 3000 admitted: %+v", a)
	}
	if s, _ := b.Snapshot(ctx, k, l, now.Add(time.Second/2)); s.Wait < 0 {
		t.Errorf("Snapshot's Wait during a block: %v", s.Wait)
	}
}

// held: MarginOr: "m when positive (at most a SustainPeriod: a longer one
// is read as that, the periods' ends never overflowing)". A margin of
// exactly a sustain period, and one just over, both span 600 s: burst 1
// refuses at 599.999 s after a call, admits at 600 s; the key is not
// swept as idle before its admission leaves the span (idle is "for any
// margin up to a sustain period").
func TestAttack2MarginOfASustainPeriodHolds(t *testing.T) {
	ctx := context.Background()
	if throttle.MarginOr(throttle.SustainPeriod) != throttle.SustainPeriod || throttle.MarginOr(throttle.SustainPeriod+1) != throttle.SustainPeriod {
		t.Fatalf("MarginOr(300 s) = %v, MarginOr(300 s + 1 ns) = %v", throttle.MarginOr(throttle.SustainPeriod), throttle.MarginOr(throttle.SustainPeriod+1))
	}
	for _, m := range []time.Duration{throttle.SustainPeriod, throttle.SustainPeriod + 1, 1 << 62} {
		b := throttle.MemoryBudgetStore{Margin: m}
		k := throttle.Key{User: "u", Scope: "s"}
		l := throttle.Limit{Burst: 1, Sustain: 1}
		b.Reserve(ctx, k, l, attack2T(0), 0)
		// other keys' calls, to tempt the idle sweep (MaxKeys is not reached)
		b.Reserve(ctx, throttle.Key{User: "v"}, l, attack2T(599), 0)
		b.Reserve(ctx, throttle.Key{User: "w"}, l, attack2T(599.5), 0)
		if a, _ := b.Reserve(ctx, k, l, attack2T(599.999), 0); a.Allowed || a.Wait != time.Millisecond {
			t.Errorf("margin %v: at 599.999 s: %+v; want refused, 1 ms", m, a)
		}
		if a, _ := b.Reserve(ctx, k, l, attack2T(600), 0); !a.Allowed {
			t.Errorf("margin %v: at 600 s: %+v; want admitted", m, a)
		}
	}
}

// held: MaxLimit: "the budget stores read a larger one as MaxLimit". A
// burst over MaxLimit beside a small sustain: the sustain still decides,
// and a snapshot reports the burst held.
func TestAttack2OverMaxBurstSmallSustainHolds(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Scope: "s"}
	l := throttle.Limit{Burst: 3 * throttle.MaxLimit, Sustain: 3}
	n := 0
	for range 10 {
		if a, _ := b.Reserve(ctx, k, l, attack2T(0), 0); a.Allowed {
			n++
		}
	}
	s, _ := b.Snapshot(ctx, k, l, attack2T(0))
	if n != 3 || s.Burst.Limit != throttle.MaxLimit || s.Sustain.Count != 3 {
		t.Errorf("%d admitted, snapshot %+v; want 3, burst limit %d", n, s, throttle.MaxLimit)
	}
}
