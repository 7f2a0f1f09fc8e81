package throttle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: a caller that sleeps exactly the Wait it was told, whatever the
// nanoseconds of its clock, of the admissions, of the margin, of a block's
// end or of a Sync's reset, is admitted then (no busy loop). Admission:
// "Wait is, when allowed, the time until the booked slot; when not
// allowed, the time until a call would be admitted (assuming no other
// admissions meanwhile)."
func TestAttack84WaitSleptExactlyIsAdmitted(t *testing.T) {
	ctx := context.Background()
	offs := []time.Duration{0, 1, 499, 500, 999, 1000, 1001, 1999}
	margins := []time.Duration{0, -1, 1, 999, 1500, 1999, 333_333_333}
	l := throttle.Limit{Burst: 2, Sustain: 3}
	n := 0
	for _, m := range margins {
		for _, o1 := range offs {
			for _, o2 := range offs {
				for _, kind := range []string{"burst", "sustain", "block", "sync"} {
					b := &throttle.MemoryBudgetStore{Margin: m}
					base := attack84T.Add(o1)
					switch kind {
					case "burst":
						b.Reserve(ctx, attack84Key, l, base, 0)
						b.Reserve(ctx, attack84Key, l, base.Add(time.Second+o2), 0)
					case "sustain":
						b.Reserve(ctx, attack84Key, l, base, 0)
						b.Reserve(ctx, attack84Key, l, base.Add(20*time.Second+o2), 0)
						b.Reserve(ctx, attack84Key, l, base.Add(40*time.Second+o2), 0)
					case "block":
						b.Block(ctx, attack84Key, base, base.Add(7*time.Second+o2))
					case "sync":
						b.Sync(ctx, attack84Key, l, base, throttle.Burst, 2, 9*time.Second+o2)
					}
					now := base.Add(2*time.Second + o2)
					if kind == "sustain" {
						now = base.Add(41*time.Second + o2)
					}
					a, _ := b.Reserve(ctx, attack84Key, l, now, 0)
					if a.Allowed {
						t.Fatalf("%s margin %v offs %v/%v: the setup did not refuse", kind, m, o1, o2)
					}
					snap, _ := b.Snapshot(ctx, attack84Key, l, now)
					if snap.Wait != a.Wait {
						t.Errorf("%s margin %v: Snapshot.Wait %v, Reserve's %v", kind, m, snap.Wait, a.Wait)
					}
					if early, _ := b.Reserve(ctx, attack84Key, l, now.Add(a.Wait-time.Microsecond), 0); early.Allowed {
						t.Errorf("%s margin %v offs %v/%v: admitted 1 µs before its Wait %v", kind, m, o1, o2, a.Wait)
					}
					again, _ := b.Reserve(ctx, attack84Key, l, now.Add(a.Wait), 0)
					if !again.Allowed {
						t.Errorf("%s margin %v offs %v/%v: slept Wait %v and refused again (Wait %v)", kind, m, o1, o2, a.Wait, again.Wait)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d cases", n)
}

// held: a MemoryServerStore caller that sleeps exactly RetryAfter is
// served (Decision: "RetryAfter is the time until the Limiter's window
// ends"), for either alignment and any nanoseconds.
func TestAttack84ServerRetryAfterSleptExactlyIsServed(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 100}
	for _, align := range []throttle.Align{throttle.FirstRequest, throttle.ClockAligned} {
		for _, o1 := range []time.Duration{0, 1, 500, 999, 1000, 1001} {
			for _, o2 := range []time.Duration{0, 1, 500, 999, 1000, 1001} {
				s := &throttle.MemoryServerStore{Align: align}
				base := attack84T.Add(3*time.Second + o1)
				s.Take(ctx, attack84Key, l, base)
				now := base.Add(time.Second + o2)
				d, _ := s.Take(ctx, attack84Key, l, now)
				if d.Allowed {
					t.Fatal("setup not refused")
				}
				d2, _ := s.Take(ctx, attack84Key, l, now.Add(d.RetryAfter))
				if !d2.Allowed {
					t.Errorf("align %v offs %v/%v: slept RetryAfter %v and refused (%v)", align, o1, o2, d.RetryAfter, d2.RetryAfter)
				}
			}
		}
	}
}

// attack84Years are times the package godoc promises ("The in-memory stores
// count any time from year 1 to 9999 (a simulation may start at the zero
// Time), to the microsecond"), plus -5000 (inside the stores' ±2^40 s),
// each at a whole microsecond not on a window boundary.
func attack84Years() map[string]time.Time {
	out := map[string]time.Time{"zero Time": {}}
	for _, y := range []int{-5000, 1, 2, 1000, 1677, 1678, 1969, 1970, 2262, 2263, 5000, 9999} {
		out[fmt.Sprint(y)] = time.Date(y, 6, 15, 13, 7, 23, 456_789_000, time.UTC)
	}
	out["1969-12-31T23:59:59.999999"] = time.Unix(-1, 999_999_000)
	out["9999-12-31T23:59:59.999999"] = time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC)
	return out
}

// floorMod is t's offset into its period, counting periods from the Unix
// epoch, for any t (big enough not to overflow over ±2^40 s).
func floorMod(t time.Time, p time.Duration) time.Duration {
	ps := int64(p / time.Second)
	m := t.Unix() % ps
	if m < 0 {
		m += ps
	}
	return time.Duration(m)*time.Second + time.Duration(t.Nanosecond())
}

// held: Align ClockAligned "starts windows at multiples of their period
// since the Unix epoch", for times before 1970 and at both ends of the
// years the package counts: the first decision's Reset is the time to the
// next multiple, a request 1 µs before it is in the window, one at it is
// in the next.
func TestAttack84ClockAlignedAcrossYears(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 1000}
	for name, at := range attack84Years() {
		t.Run(name, func(t *testing.T) {
			s := &throttle.MemoryServerStore{Align: throttle.ClockAligned}
			d, _ := s.Take(ctx, attack84Key, l, at)
			wantB := throttle.BurstPeriod - floorMod(at, throttle.BurstPeriod)
			wantS := throttle.SustainPeriod - floorMod(at, throttle.SustainPeriod)
			if !d.Allowed || d.Burst.Reset != wantB || d.Sustain.Reset != wantS {
				t.Fatalf("first take: Allowed=%v burst reset %v (want %v), sustain reset %v (want %v)", d.Allowed, d.Burst.Reset, wantB, d.Sustain.Reset, wantS)
			}
			if d2, _ := s.Take(ctx, attack84Key, l, at.Add(wantB-time.Microsecond)); d2.Allowed || d2.RetryAfter != time.Microsecond {
				t.Errorf("1 µs before the boundary: Allowed=%v RetryAfter %v", d2.Allowed, d2.RetryAfter)
			}
			if d3, _ := s.Take(ctx, attack84Key, l, at.Add(wantB)); !d3.Allowed || d3.Burst.Reset != throttle.BurstPeriod {
				t.Errorf("at the boundary: Allowed=%v burst reset %v", d3.Allowed, d3.Burst.Reset)
			}
		})
	}
}

// held: across those years, a Block's end at a whole microsecond comes back
// as Snapshot.BlockedUntil ("the server's Retry-After deadline"), blocking
// again until it changes nothing, the Wait is to it, and a booked slot is
// never 0 (Admission.Slot: "a booked slot is never zero") and goes back
// once by Release.
func TestAttack84BlockedUntilAndSlotsAcrossYears(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 2, Sustain: 10}
	for name, at := range attack84Years() {
		t.Run(name, func(t *testing.T) {
			b := &throttle.MemoryBudgetStore{}
			until := at.Add(90*time.Second + 7*time.Microsecond)
			b.Block(ctx, attack84Key, at, until)
			s, _ := b.Snapshot(ctx, attack84Key, l, at.Add(time.Second))
			if !s.BlockedUntil.Equal(until) || s.Wait != 89*time.Second+7*time.Microsecond {
				t.Fatalf("BlockedUntil %v (want %v), Wait %v", s.BlockedUntil, until, s.Wait)
			}
			b.Block(ctx, attack84Key, at.Add(time.Second), s.BlockedUntil)
			if s2, _ := b.Snapshot(ctx, attack84Key, l, at.Add(time.Second)); !s2.BlockedUntil.Equal(until) {
				t.Errorf("round trip: BlockedUntil %v", s2.BlockedUntil)
			}
			if a, _ := b.Reserve(ctx, attack84Key, l, until.Add(-time.Microsecond), 0); a.Allowed {
				t.Errorf("admitted 1 µs before the block's end")
			}
			a1, _ := b.Reserve(ctx, attack84Key, l, until, 0)
			a2, _ := b.Reserve(ctx, attack84Key, l, until, 0)
			if !a1.Allowed || !a2.Allowed || a1.Slot == 0 || a2.Slot == 0 || a1.Slot != a2.Slot {
				t.Fatalf("two calls at the block's end: %+v %+v", a1, a2)
			}
			b.Release(ctx, attack84Key, l, a1.Slot)
			if s3, _ := b.Snapshot(ctx, attack84Key, l, until); s3.Burst.Count != 1 {
				t.Errorf("after one Release: burst count %d, want 1", s3.Burst.Count)
			}
			b.Release(ctx, attack84Key, l, a2.Slot)
			if s4, _ := b.Snapshot(ctx, attack84Key, l, until); s4.Burst.Count != 0 || s4.Wait != 0 {
				t.Errorf("after both Releases: burst count %d wait %v", s4.Burst.Count, s4.Wait)
			}
			b.Release(ctx, attack84Key, l, a2.Slot) // a third changes nothing
			if s5, _ := b.Snapshot(ctx, attack84Key, l, until); s5.Burst.Count != 0 {
				t.Errorf("a third Release: burst count %d", s5.Burst.Count)
			}
		})
	}
}

// held: a slot booked after a Sync added the server's missing requests
// keeps its meaning: releasing it gives back that booking alone, and the
// synced requests still count. BudgetStore: "Release gives back a slot
// Reserve booked (Admission.Slot) for a call that was then not sent, so it
// no longer counts."
func TestAttack84SlotAfterSyncReleasesItsOwn(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 3, Sustain: 100}
	for _, at := range []time.Time{{}, time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), attack84T, time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)} {
		b := &throttle.MemoryBudgetStore{Margin: -1}
		// The server's window opened 1 s before with 3 requests the budget missed.
		b.Sync(ctx, attack84Key, l, at, throttle.Burst, 3, 14*time.Second)
		booked, _ := b.Reserve(ctx, attack84Key, l, at, time.Minute) // booked at at+14s
		if !booked.Allowed || booked.Wait != 14*time.Second || booked.Slot == 0 {
			t.Fatalf("%v: booking %+v", at, booked)
		}
		b.Release(ctx, attack84Key, l, booked.Slot)
		s, _ := b.Snapshot(ctx, attack84Key, l, at.Add(13*time.Second))
		if s.Burst.Count != 3 || s.Wait != time.Second {
			t.Errorf("%v: burst count %d wait %v after the Release, want the 3 synced, 1 s", at, s.Burst.Count, s.Wait)
		}
	}
}

// held: a Block until far past year 9999 (time.Unix(1<<62, 0)) seen from
// 9999 refuses, its Wait to the end of the 200 years the store counts
// ahead (the package doc), never a short or negative one.
func TestAttack84BlockFarFutureFrom9999(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 2, Sustain: 10}
	b := &throttle.MemoryBudgetStore{}
	now := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	b.Block(ctx, attack84Key, now, time.Unix(1<<62, 0))
	a, _ := b.Reserve(ctx, attack84Key, l, now.Add(time.Hour), 0)
	// The store counts 200 years after its first decision (the package
	// doc): a block further away lasts to that span's end.
	if a.Allowed || !a.Blocked || a.Wait < 190*365*24*time.Hour {
		t.Errorf("%+v", a)
	}
	z := &throttle.MemoryBudgetStore{}
	z.Block(ctx, attack84Key, time.Time{}, time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)) // in the past: nothing
	if a, _ := z.Reserve(ctx, attack84Key, l, time.Time{}, 0); !a.Allowed {
		t.Errorf("a block ending before year 1 refused a call at year 1: %+v", a)
	}
}
