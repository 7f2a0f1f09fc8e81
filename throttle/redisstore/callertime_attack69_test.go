package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// attack69Ref is a time the in-memory stores handle exactly: the reference for
// the same offsets (both rules are shift-invariant when windows start at the
// first request).
var attack69Ref = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// attack69Max is CallerTime's last time, in µs: 2^53 when helper 184 wrote
// these tests (the "2^53" of their comments), maxCallerTime (2^52) since.
const attack69Max = int64(maxCallerTime)

// TestAttack69CallerTimeOddWindowEndPast2p53Take: Store.CallerTime godoc: "a
// time from the Unix epoch to 2^53 microseconds after it (in 2255), which
// the scripts' numbers hold exactly"; commit 4df60b8: times "were decided at
// other times" before, now they are not. A Take (Burst 1) at 2^53-14999999
// µs, an odd time inside the range, opens a burst window that ends at
// 2^53+1 µs, past what a double holds: take.lua's bs+BP rounds it to 2^53.
// A second Take at 2^53 µs, the last time CallerTime takes and 14.999999 s
// after the first, is then read as past the window and allowed; the memory
// store at the same offsets refuses it (burst 1 of 1 used).
func TestAttack69CallerTimeOddWindowEndPast2p53Take(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkodd", Timeout: 2 * time.Second}
	ms := &throttle.MemoryServerStore{}
	base := time.UnixMicro(attack69Max - 14999999)
	for i, d := range []time.Duration{0, 14999999 * time.Microsecond} {
		want, err := ms.Take(ctx, k, l, attack69Ref.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Take(ctx, k, l, base.Add(d))
		if err != nil {
			t.Fatalf("take %d at %d µs: %v", i, base.Add(d).UnixMicro(), err)
		}
		if got.Allowed != want.Allowed || got.Burst.Count != want.Burst.Count || got.Burst.Reset != want.Burst.Reset {
			t.Errorf("take %d at %d µs: redis Allowed=%v burst count %d reset %v; memory store at the same offset Allowed=%v count %d reset %v",
				i, base.Add(d).UnixMicro(), got.Allowed, got.Burst.Count, got.Burst.Reset, want.Allowed, want.Burst.Count, want.Burst.Reset)
		}
	}
}

// TestAttack69CallerTimeOddSlotPast2p53Reserve: BudgetStore godoc: "A budget
// admits a call at t only if fewer than Burst admissions lie in
// (t-BurstPeriod-margin, t]"; Store.CallerTime: times up to 2^53 µs, "which
// the scripts' numbers hold exactly". Burst 1, default margin (1 s): a
// Reserve at 2^53-15999999 µs books that instant; a Reserve at 2^53 µs
// (maxWait 0) has that admission in (t-16 s, t], so must be refused with a
// wait of 1 µs. reserve.lua's kth+BP+margin is 2^53+1 µs, rounded to 2^53:
// the second call is admitted, two admissions in one burst window of limit
// 1.
func TestAttack69CallerTimeOddSlotPast2p53Reserve(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkoddres", Timeout: 2 * time.Second}
	ms := &throttle.MemoryBudgetStore{}
	base := time.UnixMicro(attack69Max - 15999999)
	for i, d := range []time.Duration{0, 15999999 * time.Microsecond} {
		want, err := ms.Reserve(ctx, k, l, attack69Ref.Add(d), 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Reserve(ctx, k, l, base.Add(d), 0)
		if err != nil {
			t.Fatalf("reserve %d at %d µs: %v", i, base.Add(d).UnixMicro(), err)
		}
		if got.Allowed != want.Allowed || got.Wait != want.Wait {
			t.Errorf("reserve %d at %d µs: redis Allowed=%v wait %v; memory store at the same offset Allowed=%v wait %v",
				i, base.Add(d).UnixMicro(), got.Allowed, got.Wait, want.Allowed, want.Wait)
		}
	}
}

// TestAttack69CallerTimeBlockPast2p53: BudgetStore.Block: "Block refuses calls
// for k from now until until"; CallerTime takes 2^53 µs. A block at
// 2^53-1 µs until 2^53+1 µs must refuse a Reserve at 2^53 µs (the memory
// store does: blocked, wait 1 µs). reserve.lua's till = now+duration rounds
// 2^53+1 to 2^53, and a Reserve at 2^53 is admitted.
func TestAttack69CallerTimeBlockPast2p53(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 100}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkblock", Timeout: 2 * time.Second}
	ms := &throttle.MemoryBudgetStore{}
	now := time.UnixMicro(attack69Max - 1)
	ref := attack69Ref
	if err := rs.Block(ctx, k, now, now.Add(2*time.Microsecond)); err != nil {
		t.Fatal(err)
	}
	if err := ms.Block(ctx, k, ref, ref.Add(2*time.Microsecond)); err != nil {
		t.Fatal(err)
	}
	want, err := ms.Reserve(ctx, k, l, ref.Add(time.Microsecond), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rs.Reserve(ctx, k, l, now.Add(time.Microsecond), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Allowed != want.Allowed || got.Blocked != want.Blocked || got.Wait != want.Wait {
		t.Errorf("Reserve at 2^53 µs inside a block until 2^53+1 µs: redis Allowed=%v Blocked=%v wait %v; memory store Allowed=%v Blocked=%v wait %v",
			got.Allowed, got.Blocked, got.Wait, want.Allowed, want.Blocked, want.Wait)
	}
}

// held: the same sequences at even times (a window ending at 2^53+2 µs)
// agree with the memory stores: the rounding above is the odd end's alone.
func TestAttack69CallerTimeEvenEndsPast2p53Held(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkeven", Timeout: 2 * time.Second}
	ms := &throttle.MemoryServerStore{}
	base := time.UnixMicro(attack69Max - 14999998)
	for i, d := range []time.Duration{0, 14999998 * time.Microsecond} {
		want, _ := ms.Take(ctx, k, l, attack69Ref.Add(d))
		got, err := rs.Take(ctx, k, l, base.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed != want.Allowed || got.Burst.Count != want.Burst.Count || got.Burst.Reset != want.Burst.Reset {
			t.Errorf("take %d: redis %+v; memory %+v", i, got.Burst, want.Burst)
		}
	}
}

// held: Store.CallerTime godoc: "a time from the Unix epoch to 2^53
// microseconds after it": exactly 0 and exactly 2^53 µs are taken (Take,
// Reserve, Snapshot), and Release (which sends no time) frees a slot booked
// there, so the next Reserve (burst 1) at the same time is admitted again.
func TestAttack69CallerTimeEdgesReleaseHeld(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 100}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkedges", Timeout: 2 * time.Second}
	for name, at := range map[string]time.Time{"epoch": time.Unix(0, 0), "2^53": time.UnixMicro(attack69Max), "2^53+999ns": time.UnixMicro(attack69Max).Add(999)} {
		k := throttle.Key{User: name, Title: "t", Scope: "s"}
		d, err := rs.Take(ctx, k, l, at)
		if err != nil || !d.Allowed {
			t.Errorf("%s: Take = %+v, %v", name, d, err)
		}
		a, err := rs.Reserve(ctx, k, l, at, 0)
		if err != nil || !a.Allowed {
			t.Fatalf("%s: first Reserve = %+v, %v", name, a, err)
		}
		if b, err := rs.Reserve(ctx, k, l, at, 0); err != nil || b.Allowed {
			t.Errorf("%s: second Reserve (burst 1 used) = %+v, %v", name, b, err)
		}
		if err := rs.Release(ctx, k, l, a.Slot); err != nil {
			t.Fatalf("%s: Release: %v", name, err)
		}
		if c, err := rs.Reserve(ctx, k, l, at, 0); err != nil || !c.Allowed {
			t.Errorf("%s: Reserve after Release = %+v, %v (the slot was not given back)", name, c, err)
		}
		if sn, err := rs.Snapshot(ctx, k, l, at); err != nil || sn.Counts.Burst.Count != 1 {
			t.Errorf("%s: Snapshot = %+v, %v; want burst count 1", name, sn, err)
		}
	}
}

// TestAttack69CallerTimeLearnedUntilPast2p53: LimitStore.Learn godoc: a
// confirmed limit is "in force for every key of the scope until LearnedFor
// after the last report of it"; Store.CallerTime: times up to 2^53 µs,
// "which the scripts' numbers hold exactly". Two users report a limit at
// 2^53-LearnedFor+1 µs (odd): it is in force until 2^53+1 µs, so Learned
// at 2^53 µs (a time CallerTime takes) must list it, as the memory store
// does at the same offset. learn.lua's now+lasts rounds to 2^53: Learn
// returns Until 2^53 and Learned at 2^53 lists nothing.
func TestAttack69CallerTimeLearnedUntilPast2p53(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atklearn", Timeout: 2 * time.Second}
	ms := &throttle.MemoryBudgetStore{}
	lasts := throttle.LearnedFor
	at := time.UnixMicro(attack69Max - lasts.Microseconds() + 1)
	var got, want throttle.Learned
	for _, user := range []string{"a", "b"} {
		var err error
		if got, err = rs.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: user, At: at}); err != nil {
			t.Fatal(err)
		}
		if want, err = ms.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: user, At: attack69Ref}); err != nil {
			t.Fatal(err)
		}
	}
	if got.Limit != want.Limit || got.Until.Sub(at) != want.Until.Sub(attack69Ref) {
		t.Errorf("Learn: redis limit %d until at+%v; memory store limit %d until at+%v", got.Limit, got.Until.Sub(at), want.Limit, want.Until.Sub(attack69Ref))
	}
	gotL, err := rs.Learned(ctx, time.UnixMicro(attack69Max))
	if err != nil {
		t.Fatal(err)
	}
	wantL, _ := ms.Learned(ctx, attack69Ref.Add(lasts-time.Microsecond))
	if len(gotL) != len(wantL) {
		t.Errorf("Learned at 2^53 µs (a µs before the limit ends): redis %d limits %+v; memory store at the same offset %d %+v", len(gotL), gotL, len(wantL), wantL)
	}
}
