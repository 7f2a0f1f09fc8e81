package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// attack65Ref is a time the in-memory stores handle exactly (UnixNano names it):
// the reference for times they cannot name. The server rule and the budget
// are shift-invariant (windows start at the first request), so a sequence
// at T0+d must decide as the same sequence at attack65Ref+d.
var attack65Ref = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// attack65TakeSeq runs Takes at base+offsets on a fresh CallerTime store and on a
// MemoryServerStore at attack65Ref+offsets, and reports the first disagreement.
func attack65TakeSeq(t *testing.T, srv *redistest.Server, prefix string, base time.Time, offsets []time.Duration, l throttle.Limit) {
	t.Helper()
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: prefix, Timeout: 2 * time.Second}
	ms := &throttle.MemoryServerStore{}
	for i, d := range offsets {
		want, err := ms.Take(ctx, k, l, attack65Ref.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Take(ctx, k, l, base.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed != want.Allowed || got.Burst.Count != want.Burst.Count {
			t.Errorf("take %d at base%+v (base %v, UnixMicro %d): redis Allowed=%v burst count %d reset %v; memory store (same offsets from 2026) Allowed=%v burst count %d reset %v",
				i, d, base.UTC(), base.Add(d).UnixMicro(), got.Allowed, got.Burst.Count, got.Burst.Reset, want.Allowed, want.Burst.Count, want.Burst.Reset)
		}
	}
}

// Helper 180 found CallerTime's times decided at other times than given:
// near the sentinel (-2^62 µs rounds, as a double, to the scripts' "Redis's
// clock"), past 2^53 µs either side of 1970 (year 9999, year 1, 2500: a
// Take 15 s - 1 µs after the first rounded to 15 s, a new window), and
// before 1970, where a missing block read as 0 (the Unix epoch) was in the
// future (a fresh key's first Reserve refused as blocked, its Snapshot
// blocked until 1970, a 30 s block not kept, a Sync's keys kept ten years).
// CallerTime now takes a time from the Unix epoch to 2^52 µs after it (in
// 2112: helper 184 found sums of a time up to 2^53 and a window rounded),
// which every number in a script holds exactly with the spans it adds, and
// refuses another with an error that is not ErrUnavailable (Redis was not
// asked).
func TestAttack65CallerTimeOutsideRangeRefused(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 100}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "attack65range", Timeout: 2 * time.Second}
	for name, at := range map[string]time.Time{
		"exactly -2^62":        time.UnixMicro(-1 << 62),
		"-2^62+1":              time.UnixMicro(-1<<62 + 1),
		"year 1":               {},
		"1900":                 time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		"1969-12-31T23:59:59Z": time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		"a nanosecond before":  time.Unix(0, -1),
		"2^52+1 µs":            time.UnixMicro(maxCallerTime + 1),
		"year 2500":            time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC),
		"year 9999":            time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		ops := map[string]func() error{
			"Take":     func() error { _, err := rs.Take(ctx, k, l, at); return err },
			"Peek":     func() error { _, err := rs.Peek(ctx, k, l, at); return err },
			"Reserve":  func() error { _, err := rs.Reserve(ctx, k, l, at, 0); return err },
			"Block":    func() error { return rs.Block(ctx, k, at, at.Add(30*time.Second)) },
			"Sync":     func() error { return rs.Sync(ctx, k, l, at, throttle.Burst, 1, 10*time.Second) },
			"Snapshot": func() error { _, err := rs.Snapshot(ctx, k, l, at); return err },
			"Learned":  func() error { _, err := rs.Learned(ctx, at); return err },
			"Learn": func() error {
				_, err := rs.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: "a", At: at})
				return err
			},
		}
		for op, f := range ops {
			err := f()
			if err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "CallerTime decides from 1970-01-01 to ") {
				t.Errorf("%s at %s: %v; want CallerTime's range refused", op, name, err)
			}
		}
	}
	if n, err := srv.Client().DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("Redis holds %d keys (%v) after operations refused before it was asked", n, err)
	}
}

// The last times CallerTime takes decide as any other: Takes across the
// 15 s edge ending at 2^52 µs agree with MemoryServerStore at the same
// offsets (windows start at the first request).
func TestAttack65CallerTimeLastTimesExact(t *testing.T) {
	srv := redistest.Start(t)
	base := time.UnixMicro(maxCallerTime - int64(20*time.Second/time.Microsecond))
	attack65TakeSeq(t, srv, "attack65last", base,
		[]time.Duration{0, time.Second, 15*time.Second - time.Microsecond, 15 * time.Second, 20 * time.Second}, throttle.Limit{Burst: 2, Sustain: 100})
}

// held: the fix of attack 64: Takes from the Unix epoch, across the 15 s
// edge and at 300 s, agree with MemoryServerStore.
func TestAttack65CallerTimeEpochTakeHeld(t *testing.T) {
	srv := redistest.Start(t)
	l := throttle.Limit{Burst: 2, Sustain: 100}
	attack65TakeSeq(t, srv, "atkepochheld", time.Unix(0, 0),
		[]time.Duration{0, time.Second, 2 * time.Second, 15*time.Second - time.Microsecond, 15 * time.Second, 16 * time.Second, 300 * time.Second}, l)
}
