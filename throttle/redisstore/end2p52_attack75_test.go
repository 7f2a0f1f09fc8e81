package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// attack75Ref is the reference the in-memory stores run at: a 2026 time they
// handle exactly; the Redis store runs the same offsets from a base that
// ends at 2^52 µs (CallerTime's last time).
var attack75Ref = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const attack75Max = int64(1) << 52 // CallerTime's last time, µs

func attack75Stores(t *testing.T, prefix string, margin time.Duration) (*Store, *throttle.MemoryBudgetStore, *throttle.MemoryServerStore) {
	srv := redistest.Start(t)
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: prefix, Margin: margin, Timeout: 2 * time.Second}
	return rs, &throttle.MemoryBudgetStore{Margin: margin}, &throttle.MemoryServerStore{}
}

func attack75SnapEq(t *testing.T, what string, got throttle.Snapshot, gotNow time.Time, want throttle.Snapshot, wantNow time.Time) {
	t.Helper()
	var gb, wb time.Duration
	if !got.BlockedUntil.IsZero() {
		gb = got.BlockedUntil.Sub(gotNow)
	}
	if !want.BlockedUntil.IsZero() {
		wb = want.BlockedUntil.Sub(wantNow)
	}
	if got.Counts != want.Counts || got.Wait != want.Wait || gb != wb {
		t.Errorf("%s: redis Snapshot %+v wait %v blocked +%v; memory %+v wait %v blocked +%v", what, got.Counts, got.Wait, gb, want.Counts, want.Wait, wb)
	}
}

// held: Store.CallerTime godoc: "a time from the Unix epoch to 2^52
// microseconds after it (in 2112), which the scripts' numbers hold exactly
// with every span they add". A sequence of every budget operation (Reserve
// with maxWait 0, 1 day and 3 days, Release, Block for 2 days, Sync of both
// windows, Snapshot) at odd µs offsets, with an odd margin (1 s + 1 µs),
// ending exactly at 2^52 µs, gives the same answers as MemoryBudgetStore at
// the same offsets from 2026; so do Take and Peek against MemoryServerStore,
// and Learn/Learned against MemoryBudgetStore.
func TestAttack75End2p52SequenceAgreesHeld(t *testing.T) {
	ctx := context.Background()
	margin := time.Second + time.Microsecond
	rs, mb, msrv := attack75Stores(t, "atkseq", margin)
	const day = 24 * time.Hour
	total := 3*day + 777777*time.Microsecond // odd
	base := time.UnixMicro(attack75Max).Add(-total)
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 3, Sustain: 5}

	step := 0
	reserve := func(off, maxWait time.Duration, release bool) {
		t.Helper()
		step++
		got, err := rs.Reserve(ctx, k, l, base.Add(off), maxWait)
		if err != nil {
			t.Fatalf("step %d: redis Reserve at +%v: %v", step, off, err)
		}
		want, _ := mb.Reserve(ctx, k, l, attack75Ref.Add(off), maxWait)
		if got.Allowed != want.Allowed || got.Wait != want.Wait || got.Blocked != want.Blocked {
			t.Errorf("step %d: Reserve at +%v maxWait %v: redis %+v; memory %+v", step, off, maxWait, got, want)
		}
		if release && got.Allowed && want.Allowed {
			if err := rs.Release(ctx, k, l, got.Slot); err != nil {
				t.Fatal(err)
			}
			mb.Release(ctx, k, l, want.Slot)
		}
	}
	snap := func(off time.Duration) {
		t.Helper()
		got, err := rs.Snapshot(ctx, k, l, base.Add(off))
		if err != nil {
			t.Fatalf("redis Snapshot at +%v: %v", off, err)
		}
		want, _ := mb.Snapshot(ctx, k, l, attack75Ref.Add(off))
		attack75SnapEq(t, fmt.Sprintf("snapshot at +%v", off), got, base.Add(off), want, attack75Ref.Add(off))
	}
	us := time.Microsecond
	reserve(1*us, 0, false)
	reserve(3*us, 0, false)
	reserve(3*us, 0, false)
	reserve(5*us, 0, false) // burst full
	reserve(5*us, 3*day, true)
	reserve(7*us, 3*day, false)
	snap(9 * us)
	if err := rs.Block(ctx, k, base.Add(11*us), base.Add(11*us+2*day+7*us)); err != nil {
		t.Fatal(err)
	}
	mb.Block(ctx, k, attack75Ref.Add(11*us), attack75Ref.Add(11*us+2*day+7*us))
	reserve(13*us, day, false)
	reserve(13*us, 3*day, false)
	snap(15 * us)
	// Jump to 10 minutes before the end: sync both windows there.
	end := total
	at := end - 10*time.Minute + 1*us
	snap(at)
	for _, s := range []struct {
		p     throttle.Period
		used  int
		reset time.Duration
	}{{throttle.Sustain, 4, 123*time.Second + 1*us}, {throttle.Burst, 2, 9*time.Second + 3*us}} {
		if err := rs.Sync(ctx, k, l, base.Add(at), s.p, s.used, s.reset); err != nil {
			t.Fatal(err)
		}
		mb.Sync(ctx, k, l, attack75Ref.Add(at), s.p, s.used, s.reset)
		snap(at)
	}
	reserve(at+2*us, 0, false)
	reserve(at+2*us, 10*time.Minute, false)
	reserve(end-15*time.Second-1*us, time.Hour, true)
	snap(end - 1*us)
	reserve(end, 0, false)
	reserve(end, 3*day, false)
	snap(end)

	// Server rule: Takes and Peeks ending at 2^52 µs.
	sl := throttle.Limit{Burst: 2, Sustain: 4}
	for i, off := range []time.Duration{end - 299999999*us, end - 15*time.Second - 1*us, end - 14999999*us, end - 3*us, end - 1*us, end} {
		for _, peek := range []bool{false, true} {
			var got, want throttle.Decision
			var err error
			if peek {
				got, err = rs.Peek(ctx, k, sl, base.Add(off))
				want, _ = msrv.Peek(ctx, k, sl, attack75Ref.Add(off))
			} else {
				got, err = rs.Take(ctx, k, sl, base.Add(off))
				want, _ = msrv.Take(ctx, k, sl, attack75Ref.Add(off))
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("take %d (peek %v) at end-%v: redis %+v; memory %+v", i, peek, end-off, got, want)
			}
		}
	}

	// Learned limits: confirmed LearnedFor-1µs before the end, in force
	// at the end; a candidate confirmed by the same user a period later.
	lf := throttle.LearnedFor
	reports := []struct {
		scope, user string
		p           throttle.Period
		off         time.Duration
	}{
		{"a", "x", throttle.Burst, end - lf + 1*us},
		{"a", "y", throttle.Burst, end - lf + 1*us},
		{"b", "x", throttle.Sustain, end - throttle.SustainPeriod - 1*us},
		{"b", "x", throttle.Sustain, end - 1*us},
		{"c", "x", throttle.Burst, end - 14999999*us},
		{"c", "x", throttle.Burst, end},
	}
	for i, r := range reports {
		got, err := rs.Learn(ctx, throttle.LimitReport{Scope: r.scope, Period: r.p, Limit: 7, User: r.user, At: base.Add(r.off)})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mb.Learn(ctx, throttle.LimitReport{Scope: r.scope, Period: r.p, Limit: 7, User: r.user, At: attack75Ref.Add(r.off)})
		if got.Limit != want.Limit || (got.Limit != 0 && got.Until.Sub(base) != want.Until.Sub(attack75Ref)) {
			t.Errorf("learn %d: redis %+v (until +%v); memory %+v (until +%v)", i, got, got.Until.Sub(base), want, want.Until.Sub(attack75Ref))
		}
	}
	for _, off := range []time.Duration{end - 1*us, end} {
		got, err := rs.Learned(ctx, base.Add(off))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mb.Learned(ctx, attack75Ref.Add(off))
		g, w := map[string]time.Duration{}, map[string]time.Duration{}
		for _, x := range got {
			g[x.Scope+x.Period.String()] = x.Until.Sub(base)
		}
		for _, x := range want {
			w[x.Scope+x.Period.String()] = x.Until.Sub(attack75Ref)
		}
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("Learned at end-%v: redis %v; memory %v", end-off, g, w)
		}
	}
}

// held: Take with ClockAligned windows at absolute times up to 2^52 µs
// agrees with MemoryServerStore{Align: ClockAligned} at the same absolute
// times (which it names exactly in ns): 2^52 µs is no multiple of 15 s or
// 300 s, so the windows' starts are computed, not given.
func TestAttack75End2p52ClockAlignedHeld(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkalign", Align: throttle.ClockAligned, Timeout: 2 * time.Second}
	ms := &throttle.MemoryServerStore{Align: throttle.ClockAligned}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 2, Sustain: 3}
	end := time.UnixMicro(attack75Max)
	for i, d := range []time.Duration{301 * time.Second, 20 * time.Second, 7 * time.Second, 3 * time.Microsecond, 1 * time.Microsecond, 0} {
		got, err := rs.Take(ctx, k, l, end.Add(-d))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ms.Take(ctx, k, l, end.Add(-d))
		if got != want {
			t.Errorf("take %d at end-%v: redis %+v; memory %+v", i, d, got, want)
		}
	}
}

// held: BudgetStore.Block: "Block refuses calls for k from now until
// until". A Block at a valid CallerTime from 2026 on (2026, 2^52-1 µs,
// 2^52 µs) until the year 9999 still refuses a Reserve at its own time and
// at 2^52 µs, the last time CallerTime takes, with maxWait 0 and with
// maxWait a week (blocked).
func TestAttack75BlockYear9999Held(t *testing.T) {
	ctx := context.Background()
	rs, _, _ := attack75Stores(t, "attack759999", 0)
	l := throttle.Limit{Burst: 10, Sustain: 100}
	far := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	for i, now := range []time.Time{attack75Ref, time.UnixMicro(attack75Max - 1), time.UnixMicro(attack75Max)} {
		k := throttle.Key{User: fmt.Sprint(i), Title: "t", Scope: "s"}
		if err := rs.Block(ctx, k, now, far); err != nil {
			t.Fatal(err)
		}
		for _, at := range []time.Time{now, time.UnixMicro(attack75Max)} {
			for _, mw := range []time.Duration{0, 7 * 24 * time.Hour} {
				a, err := rs.Reserve(ctx, k, l, at, mw)
				if err != nil || a.Allowed || !a.Blocked {
					t.Errorf("block from %v until 9999: Reserve at %v maxWait %v = %+v, %v; want refused, blocked", now, at, mw, a, err)
				}
			}
		}
	}
}

// TestAttack75BlockNearEpochEndsAt2p52: BudgetStore.Block: "Block refuses calls
// for k from now until until"; redisstore Block: "Block refuses calls for k
// until until, measured from now"; Store.CallerTime: times "from the Unix
// epoch to 2^52 microseconds after it" (a simulation that starts its clock
// at the epoch). Block's span is clamped to 2^52 µs, so a Block at the
// epoch until the year 9999 (or only until 2^52+1 µs) ends at exactly
// 2^52 µs: a Reserve at 2^52 µs (a time CallerTime takes, inside the block)
// is admitted with maxWait 0. A Block at epoch+1 µs until 9999 ends at
// 2^52+1 µs: a Reserve at 2^52 µs with maxWait a week is admitted, its
// slot 1 µs later, in the year 2112, inside the block. MemoryBudgetStore
// refuses both (blocked).
func TestAttack75BlockNearEpochEndsAt2p52(t *testing.T) {
	ctx := context.Background()
	rs, _, _ := attack75Stores(t, "atkepoch", 0)
	l := throttle.Limit{Burst: 10, Sustain: 100}
	last := time.UnixMicro(attack75Max)
	y9999 := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		from, until time.Time
		maxWait     time.Duration
	}{
		{time.Unix(0, 0), y9999, 0},
		{time.Unix(0, 0), last.Add(time.Microsecond), 0},
		{time.UnixMicro(1), y9999, 7 * 24 * time.Hour},
	} {
		k := throttle.Key{User: fmt.Sprint("epoch", i), Title: "t", Scope: "s"}
		mb := &throttle.MemoryBudgetStore{}
		if err := rs.Block(ctx, k, c.from, c.until); err != nil {
			t.Fatal(err)
		}
		mb.Block(ctx, k, c.from, c.until)
		got, err := rs.Reserve(ctx, k, l, last, c.maxWait)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mb.Reserve(ctx, k, l, last, c.maxWait)
		if got.Allowed != want.Allowed || got.Blocked != want.Blocked {
			t.Errorf("Block at %v until %v, Reserve at 2^52 µs (%v) maxWait %v: redis Allowed=%v Wait=%v Blocked=%v; memory Allowed=%v Blocked=%v",
				c.from.UTC().Format(time.RFC3339Nano), c.until.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano), c.maxWait,
				got.Allowed, got.Wait, got.Blocked, want.Allowed, want.Blocked)
		}
	}
	// The same clamp admits, at the epoch, a slot booked inside the block:
	// BudgetStore.Reserve: "the call must be sent no earlier than
	// now+Wait", and Block "refuses calls ... until until".
	k := throttle.Key{User: "epoch-wait", Title: "t", Scope: "s"}
	epoch := time.Unix(0, 0)
	until := last.Add(5 * time.Microsecond)
	if err := rs.Block(ctx, k, epoch, until); err != nil {
		t.Fatal(err)
	}
	a, err := rs.Reserve(ctx, k, l, epoch, until.Sub(epoch)+time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if a.Allowed && epoch.Add(a.Wait).Before(until) {
		t.Errorf("Block at the epoch until 2^52+5 µs; Reserve at the epoch (maxWait past the block): admitted with Wait %v, a slot at %v, inside the block",
			a.Wait, epoch.Add(a.Wait).UTC().Format(time.RFC3339Nano))
	}
}

// TestAttack75BookingAt2p53WaitRounded: Store.CallerTime godoc: times up to 2^52
// µs, "which the scripts' numbers hold exactly with every span they add";
// Admission.Wait: "when not allowed, the time until a call would be
// admitted". A Block at 2^52 µs until the year 9999 (clamped: blocked until
// 2^53 µs) and a Reserve at 2^52 µs with a long maxWait (clamped to 2^52
// µs) book an admission at 2^53 µs, a time a script then adds a window and
// the margin to. With an odd margin (1 s + 1 µs) and Burst 1, the next
// Reserve's refused Wait and Snapshot's Burst Reset are 2^52 µs + 16 s + 1
// µs (MemoryBudgetStore at the same offsets from 2026 says so); reserve.lua
// computes 2^53+16000001, which a double rounds to 2^53+16000000: 1 µs
// short.
func TestAttack75BookingAt2p53WaitRounded(t *testing.T) {
	ctx := context.Background()
	margin := time.Second + time.Microsecond
	rs, mb, _ := attack75Stores(t, "atkbook", margin)
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	now := time.UnixMicro(attack75Max)
	span := time.Duration(attack75Max) * time.Microsecond // the clamp: 2^52 µs
	if err := rs.Block(ctx, k, now, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	mb.Block(ctx, k, attack75Ref, attack75Ref.Add(span))
	first, err := rs.Reserve(ctx, k, l, now, 200*365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Since helper 189: a wait ends by CallerTime's last time and a block
	// past it, so no slot is booked at a time CallerTime would refuse (the
	// booking at 2^53 µs this test found is never made): the call is
	// refused, blocked.
	if first.Allowed || !first.Blocked {
		t.Errorf("Reserve at 2^52 µs under a block past CallerTime's last time: %+v; want refused, blocked (no slot past 2^52 µs)", first)
	}
}
