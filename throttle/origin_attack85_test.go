package throttle_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

var (
	attack85Key   = throttle.Key{User: "u", Title: "t", Scope: "s"}
	attack85Other = throttle.Key{User: "other", Title: "t", Scope: "s"}
	// attack85T0 is on a whole sustain period since the epoch (so an origin
	// fixed by a call at it is attack85T0 itself).
	attack85T0 = time.Unix(1_780_000_200, 0).UTC()
)

const attack85Year = time.Duration(365.25 * 24 * float64(time.Hour))

// TestAttack85SnapshotOfUnusedKeyFixesOrigin: a Snapshot of a key never used,
// taken at the zero Time (or year 9999), is the store's first call; every
// later decision of 2026 then counts as the span's end, one instant, so a
// call a whole burst period after the first is refused (and would be for
// ever).
//
// Package doc: "The in-memory stores count time to the nanosecond from 73
// years before their first decision to 200 years after it, whatever year
// that is". A Snapshot decides nothing ("Snapshot reports k's budget at
// now, without creating it"), yet it fixes the origin (table.shift), so
// the first decision (2026) is not counted to the nanosecond at all.
// BudgetStore: "A budget admits a call at t only if fewer than Burst
// admissions lie in (t-BurstPeriod-margin, t]".
func TestAttack85SnapshotOfUnusedKeyFixesOrigin(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	for _, first := range []time.Time{{}, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)} {
		t.Run(first.Format("2006"), func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{Margin: -1}
			if _, err := b.Snapshot(ctx, attack85Other, l, first); err != nil {
				t.Fatal(err)
			}
			a1, _ := b.Reserve(ctx, attack85Key, l, attack85T0, 0)
			if !a1.Allowed {
				t.Fatalf("first decision refused: %+v", a1)
			}
			a2, _ := b.Reserve(ctx, attack85Key, l, attack85T0.Add(throttle.BurstPeriod), 0)
			if !a2.Allowed {
				t.Errorf("after a Snapshot at %v, a call a burst period after the first (burst 1, no margin) is refused: %+v", first, a2)
			}
			a3, _ := b.Reserve(ctx, attack85Key, l, attack85T0.Add(time.Hour), 0)
			if !a3.Allowed {
				t.Errorf("after a Snapshot at %v, a call an hour after the first (burst 1, no margin) is refused: %+v", first, a3)
			}
		})
	}
}

// TestAttack85PeekOfUnusedKeyFixesOrigin: the same with MemoryServerStore.Peek.
//
// Package doc: "The in-memory stores count time to the nanosecond from 73
// years before their first decision to 200 years after it, whatever year
// that is". Peek: "Peek reports k's counts at now without counting a
// request". ServerStore: "each key has a fixed burst window ... (starting
// as Align says)" and FirstRequest "starts each window at the first request
// counted after the previous window of its kind ended". After a Peek at the
// zero Time, the 2026 window never ends.
func TestAttack85PeekOfUnusedKeyFixesOrigin(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	s := &throttle.MemoryServerStore{}
	if _, err := s.Peek(ctx, attack85Other, l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	d1, _ := s.Take(ctx, attack85Key, l, attack85T0)
	if !d1.Allowed || d1.Burst.Reset != throttle.BurstPeriod {
		t.Errorf("first Take: %+v (want allowed, burst reset %v)", d1, throttle.BurstPeriod)
	}
	d2, _ := s.Take(ctx, attack85Key, l, attack85T0.Add(time.Hour))
	if !d2.Allowed {
		t.Errorf("after a Peek at the zero Time, a Take an hour after the first (burst 1) is refused: %+v", d2)
	}
}

// TestAttack85BookingChainOverflows: a key whose callers book ahead (maxWait
// math.MaxInt64, "wait as long as it takes") overflows the instants, now
// nanoseconds: near the span's end (200 years after the first decision,
// inside the span) after about a million bookings, and at the first
// decision's own time after about 11.5 million. The next caller is then
// admitted at once (Wait 0), at the same now as the first booking, under a
// sustain limit of 1. (In microseconds, before 7058a0e, the headroom was a
// thousand times larger.)
//
// BudgetStore: "A budget admits a call at t only if fewer than Burst
// admissions lie in (t-BurstPeriod-margin, t] and fewer than Sustain in
// (t-SustainPeriod-margin, t], so no span of a period ever holds more than
// its limit"; Reserve: "the call must be sent no earlier than now+Wait, so
// callers that book in turn are served in turn".
func TestAttack85BookingChainOverflows(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Sustain: 1}
	for _, c := range []struct {
		name string
		at   time.Duration // from the first decision
		max  int
	}{
		// Two days before the span's end: past the fix, the chain stops
		// there (nothing is booked past the span), after 288 bookings;
		// before it, it ran on to the overflow (a million bookings from
		// 200 years on, 11.5 million from the first decision's time).
		{"2 days before the span's end", maxShiftApprox() - 48*time.Hour, 3_000_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{Margin: throttle.SustainPeriod}
			if a, _ := b.Reserve(ctx, attack85Other, l, attack85T0, 0); !a.Allowed { // fixes the origin at attack85T0
				t.Fatal("first decision refused")
			}
			now := attack85T0.Add(c.at)
			first, _ := b.Reserve(ctx, attack85Key, l, now, math.MaxInt64)
			if !first.Allowed || first.Wait != 0 {
				t.Fatalf("first booking: %+v", first)
			}
			prev := first.Wait
			for i := 1; i < c.max; i++ {
				a, _ := b.Reserve(ctx, attack85Key, l, now, math.MaxInt64)
				if !a.Allowed {
					t.Logf("booking %d refused (Wait %v): the chain ended without overflow", i, a.Wait)
					return
				}
				if a.Wait <= prev || a.Slot <= 0 {
					t.Fatalf("booking %d at the same now as the first (sustain 1, booked in turn): Allowed with Wait %v (previous booking's Wait %v), Slot %d: a second call may go at once", i, a.Wait, prev, a.Slot)
				}
				prev = a.Wait
			}
		})
	}
}

// TestAttack85ReleaseOfBookingAheadForgetsSentCall: with the ring full (30 calls
// sent under sustain 30), a call booked ahead pushes the oldest sent call
// out of the ring; when that booking is cancelled and Released, the store
// holds 29 of the 30 calls sent in the span, and a 31st is admitted at
// once, 46 s after the first.
//
// BudgetStore.Release: "Release gives back a slot Reserve booked
// (Admission.Slot) for a call that was then not sent, so it no longer
// counts" (only that one); BudgetStore: "fewer than Sustain in
// (t-SustainPeriod-margin, t], so no span of a period ever holds more than
// its limit".
func TestAttack85ReleaseOfBookingAheadForgetsSentCall(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 10, Sustain: 30}
	b := &throttle.MemoryBudgetStore{Margin: -1}
	sent := 0
	for _, s := range []time.Duration{0, 15 * time.Second, 30 * time.Second} {
		for range 10 {
			if a, _ := b.Reserve(ctx, attack85Key, l, attack85T0.Add(s), 0); a.Allowed {
				sent++
			}
		}
	}
	if sent != 30 {
		t.Fatalf("sent %d, want 30", sent)
	}
	ahead, _ := b.Reserve(ctx, attack85Key, l, attack85T0.Add(31*time.Second), 10*time.Minute)
	if !ahead.Allowed || ahead.Wait != 269*time.Second {
		t.Fatalf("booking ahead: %+v", ahead)
	}
	b.Release(ctx, attack85Key, l, ahead.Slot) // cancelled: not sent
	at := attack85T0.Add(46 * time.Second)
	if a, _ := b.Reserve(ctx, attack85Key, l, at, 0); a.Allowed {
		t.Errorf("30 calls sent in the last 46 s under sustain 30, one booking ahead given back: a call at +46s is admitted: %+v", a)
	}
	if snap, _ := b.Snapshot(ctx, attack85Key, l, at); snap.Sustain.Count > 30 || snap.Sustain.Count < 30 {
		t.Logf("snapshot: sustain count %d", snap.Sustain.Count)
	}
}

// held: the package doc, restated with this test (it was
// TestAttack85BlockPastSpanEndAdmits, judged): "a time further away counts as
// that span's end", a block's end too. A Block until 9999 from a store
// whose first decision is in 2026 refuses every call inside the span (an
// hour into it, 199 years on); past the span, where every time counts as
// its end, it ends there (a call 250 years on is the span's end, which the
// block's end is too).
func TestAttack85BlockPastSpanEndAdmits(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	b := &throttle.MemoryBudgetStore{}
	b.Reserve(ctx, attack85Other, l, attack85T0, 0) // fixes the origin
	until := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Block(ctx, attack85Key, attack85T0.Add(time.Hour), until)
	for _, at := range []time.Time{attack85T0.Add(2 * time.Hour), attack85T0.Add(199 * attack85Year)} {
		if a, _ := b.Reserve(ctx, attack85Key, l, at, 0); a.Allowed || !a.Blocked {
			t.Errorf("a call at %v, inside the span and the block: %+v", at, a)
		}
	}
}

// held: "The in-memory stores count time to the nanosecond from 73 years
// before their first decision to 200 years after it" - a burst span is
// exact to the ns just inside both edges, and the first decision may be at
// the zero Time ("a simulation may start at the zero Time").
func TestAttack85SpanEdgesExact(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	for _, c := range []struct {
		name  string
		first time.Time
		at    time.Duration // offset of the tested calls from first
	}{
		{"73y back", attack85T0, -73*attack85Year + 7*time.Nanosecond},
		{"200y ahead", attack85T0, 200*attack85Year + 7*time.Nanosecond},
		{"zero Time sim", time.Time{}, 3*time.Second + 123*time.Nanosecond},
		{"zero Time sim 200y", time.Time{}, 200*attack85Year + 123*time.Nanosecond},
		{"year 9999 sim 73y back", time.Date(9999, 6, 1, 0, 0, 0, 0, time.UTC), -73*attack85Year + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{Margin: -1}
			if a, _ := b.Reserve(ctx, attack85Other, l, c.first, 0); !a.Allowed {
				t.Fatal("first decision refused")
			}
			at := c.first.Add(c.at)
			if a, _ := b.Reserve(ctx, attack85Key, l, at, 0); !a.Allowed || a.Slot <= 0 {
				t.Fatalf("call at %v: %+v", at, a)
			}
			if a, _ := b.Reserve(ctx, attack85Key, l, at.Add(throttle.BurstPeriod-1), 0); a.Allowed || a.Wait != 1 {
				t.Errorf("1ns before the span ends: %+v (want refused, Wait 1ns)", a)
			}
			snap, _ := b.Snapshot(ctx, attack85Key, l, at.Add(time.Second))
			if snap.Wait != throttle.BurstPeriod-time.Second || snap.Burst.Reset != throttle.BurstPeriod-time.Second || snap.Burst.Count != 1 {
				t.Errorf("snapshot 1s after: %+v", snap)
			}
			if a, _ := b.Reserve(ctx, attack85Key, l, at.Add(throttle.BurstPeriod), 0); !a.Allowed {
				t.Errorf("at the span's end: %+v (want admitted)", a)
			}
			s := &throttle.MemoryServerStore{}
			s.Take(ctx, attack85Other, l, c.first)
			s.Take(ctx, attack85Key, l, at)
			d, _ := s.Take(ctx, attack85Key, l, at.Add(7*time.Second+333))
			if d.Allowed || d.RetryAfter != throttle.BurstPeriod-7*time.Second-333 {
				t.Errorf("server Take 7s+333ns into the window: %+v", d)
			}
		})
	}
}

// held: "a time further away counts as that span's end" stays fail closed:
// a caller that sleeps exactly Wait outside the span (a first decision in
// year 9999, then calls in 2026; or calls 250 years after it) is never
// admitted beyond the limit and never told to wait 0 while refused.
func TestAttack85OutsideSpanFailsClosed(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 2, Sustain: 5}
	for _, c := range []struct {
		name  string
		first time.Time
		start time.Time
	}{
		{"9999 then 2026", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), attack85T0},
		{"2026 then +250y", attack85T0, attack85T0.Add(250 * attack85Year)},
		{"crossing +200y edge", attack85T0, attack85T0.Add(maxShiftApprox() - 20*time.Second)},
		{"crossing -73y edge", attack85T0, attack85T0.Add(minShiftApprox() - 20*time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{Margin: -1}
			b.Reserve(ctx, attack85Other, l, c.first, 0)
			var sent []time.Time
			now := c.start
			for range 200 {
				a, _ := b.Reserve(ctx, attack85Key, l, now, 0)
				if a.Allowed {
					sent = append(sent, now)
					continue
				}
				if a.Wait <= 0 {
					t.Fatalf("refused with Wait %v at %v", a.Wait, now)
				}
				now = now.Add(a.Wait)
			}
			for i := range sent {
				nb, ns := 0, 0
				for j := range sent {
					if d := sent[i].Sub(sent[j]); d >= 0 && d < throttle.BurstPeriod {
						nb++
					}
					if d := sent[i].Sub(sent[j]); d >= 0 && d < throttle.SustainPeriod {
						ns++
					}
				}
				if nb > l.Burst || ns > l.Sustain {
					t.Fatalf("at %v: %d in a burst span, %d in a sustain span", sent[i], nb, ns)
				}
			}
			t.Logf("%d sent, last at %v", len(sent), now)
		})
	}
}

// maxShiftApprox is about 200.9 years: the span's end after the origin.
func maxShiftApprox() time.Duration {
	return time.Duration(math.MaxInt64 - (int64(throttle.SustainPeriod) * (1 << 61 / int64(throttle.SustainPeriod))) - 1<<59 - 4*int64(throttle.SustainPeriod))
}

// minShiftApprox is about -73.07 years: the span's start before the origin.
func minShiftApprox() time.Duration {
	return 4*throttle.SustainPeriod - time.Duration(int64(throttle.SustainPeriod)*(1<<61/int64(throttle.SustainPeriod)))
}

// held: "BlockedUntil is the server's Retry-After deadline" and Reserve's
// Wait are exact to the ns, whatever the origin (a zero-Time simulation, a
// first call before 1970).
func TestAttack85BlockedUntilExact(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 5}
	for _, first := range []time.Time{attack85T0.Add(123456789), {}, time.Date(1969, 12, 31, 23, 59, 59, 500, time.UTC), time.Date(9999, 12, 31, 23, 0, 0, 1, time.UTC)} {
		b := &throttle.MemoryBudgetStore{}
		b.Reserve(ctx, attack85Other, l, first, 0)
		now := first.Add(17*time.Minute + 3)
		until := now.Add(42*time.Second + 987654321)
		b.Block(ctx, attack85Key, now, until)
		snap, _ := b.Snapshot(ctx, attack85Key, l, now.Add(1))
		if !snap.BlockedUntil.Equal(until) || snap.Wait != until.Sub(now)-1 {
			t.Errorf("first %v: BlockedUntil %v (want %v), Wait %v (want %v)", first, snap.BlockedUntil, until, snap.Wait, until.Sub(now)-1)
		}
		a, _ := b.Reserve(ctx, attack85Key, l, now.Add(2), 0)
		if a.Allowed || !a.Blocked || a.Wait != until.Sub(now)-2 {
			t.Errorf("first %v: %+v", first, a)
		}
		if a, _ := b.Reserve(ctx, attack85Key, l, until, 0); !a.Allowed {
			t.Errorf("first %v: at until: %+v", first, a)
		}
	}
}

// modPeriod is t's offset into its period since the Unix epoch.
func modPeriod(t time.Time, p time.Duration) time.Duration {
	ps := int64(p / time.Second)
	m := t.Unix() % ps
	if m < 0 {
		m += ps
	}
	return time.Duration(m)*time.Second + time.Duration(t.Nanosecond())
}

// held: ClockAligned "starts windows at multiples of their period since the
// Unix epoch", whatever the first call's time fixed as the origin.
func TestAttack85ClockAlignedWhateverOrigin(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 3, Sustain: 10}
	for _, first := range []time.Time{
		{},
		time.Time{}.Add(7*time.Second + 300*time.Millisecond + 1),
		time.Date(1969, 12, 31, 23, 59, 52, 500_000_001, time.UTC),
		time.Date(1900, 3, 3, 3, 3, 3, 3, time.UTC),
		attack85T0.Add(7*time.Second + 123456789),
		time.Date(9999, 12, 31, 23, 59, 50, 500, time.UTC),
	} {
		later := first.Add(time.Hour + 3*time.Second + 333)
		if first.Year() == 9999 {
			later = first.Add(-time.Hour - 3*time.Second - 333)
		}
		s := &throttle.MemoryServerStore{Align: throttle.ClockAligned}
		for _, at := range []time.Time{first, later} {
			d, _ := s.Take(ctx, attack85Key, l, at)
			if d.Burst.Reset != throttle.BurstPeriod-modPeriod(at, throttle.BurstPeriod) || d.Sustain.Reset != throttle.SustainPeriod-modPeriod(at, throttle.SustainPeriod) {
				t.Errorf("first %v, Take at %v: resets %v / %v, want %v / %v", first, at, d.Burst.Reset, d.Sustain.Reset,
					throttle.BurstPeriod-modPeriod(at, throttle.BurstPeriod), throttle.SustainPeriod-modPeriod(at, throttle.SustainPeriod))
			}
		}
	}
}

// held: 64 goroutines whose first calls race with different times (within
// 64 ms of each other) admit exactly the limit, and the store then counts
// exact spans ("MemoryBudgetStore is safe for concurrent use";
// "MemoryServerStore is safe for concurrent use"). Run with -race.
func TestAttack85FirstCallsRace(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 10}
	for range 20 {
		b := &throttle.MemoryBudgetStore{Margin: -1}
		s := &throttle.MemoryServerStore{}
		var wg sync.WaitGroup
		var mu sync.Mutex
		okB, okS := 0, 0
		start := make(chan struct{})
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				at := attack85T0.Add(time.Duration(i)*time.Millisecond + time.Duration(i))
				switch i % 4 {
				case 0:
					b.Snapshot(ctx, attack85Key, l, at)
					s.Peek(ctx, attack85Key, l, at)
				case 1:
					b.Sync(ctx, attack85Other, l, at, throttle.Burst, 0, time.Second)
				}
				a, _ := b.Reserve(ctx, attack85Key, l, at, 0)
				d, _ := s.Take(ctx, attack85Key, l, at)
				mu.Lock()
				if a.Allowed {
					okB++
					if a.Slot <= 0 {
						t.Errorf("slot %d", a.Slot)
					}
				}
				if d.Allowed {
					okS++
				}
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		if okB != 10 || okS != 10 {
			t.Fatalf("admitted %d (budget), %d (server), want 10 each", okB, okS)
		}
		after := attack85T0.Add(64*time.Millisecond + throttle.BurstPeriod)
		if a, _ := b.Reserve(ctx, attack85Key, l, after, 0); !a.Allowed {
			t.Fatalf("budget after the span: %+v", a)
		}
		if d, _ := s.Take(ctx, attack85Key, l, after); !d.Allowed {
			t.Fatalf("server after the window: %+v", d)
		}
	}
}

// held: "a booked slot is never zero" and slots stay positive and ordered
// in two stores whose origins are far apart (as a transport's shared and
// local stores may be), for calls anywhere in each store's span (73 years
// before its first decision to 200 after).
func TestAttack85SlotsPositiveTwoOrigins(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1}
	y1, y9999 := time.Time{}, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		first time.Time
		at    []time.Time
	}{
		{y1, []time.Time{y1, y1.Add(-time.Hour), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), y1.Add(199 * attack85Year)}},
		{y9999, []time.Time{y9999, y9999.Add(-72 * attack85Year), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
	} {
		st := &throttle.MemoryBudgetStore{}
		st.Reserve(ctx, attack85Other, l, c.first, 0)
		for i, at := range c.at {
			k := throttle.Key{User: "k", Scope: string(rune('a' + i))}
			a, _ := st.Reserve(ctx, k, l, at, time.Hour)
			b, _ := st.Reserve(ctx, k, l, at, time.Hour)
			if !a.Allowed || !b.Allowed || a.Slot <= 0 || b.Slot <= a.Slot {
				t.Errorf("first %v, at %v: slots %d, %d (%+v, %+v)", c.first, at, a.Slot, b.Slot, a, b)
			}
		}
	}
}
