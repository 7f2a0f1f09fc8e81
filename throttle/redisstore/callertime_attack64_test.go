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

// TestAttack64CallerTimeAtUnixEpochTake: a simulation whose clock starts at
// the Unix epoch (time.Unix(0, 0)). Godoc: "the now arguments of the
// throttle interfaces are ignored unless CallerTime is set (for tests and
// simulations that drive time themselves)" and "CallerTime decides with the
// now passed in instead of Redis TIME". A now of exactly the epoch packs as
// 0, which the scripts read as "use Redis TIME": the first Take is counted
// in a window opened at Redis's clock (today), so the Take one second later
// (now = 1 s) finds that window far in its future and opens a new one:
// a burst of 1 lets the second request through, where the memory store
// refuses it.
func TestAttack64CallerTimeAtUnixEpochTake(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 100}
	k := throttle.Key{User: "epoch-user", Title: "t", Scope: "s"}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkepoch", Timeout: 2 * time.Second}
	ms := &throttle.MemoryServerStore{}
	for i, at := range []time.Time{time.Unix(0, 0), time.Unix(1, 0)} {
		want, err := ms.Take(ctx, k, l, at)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Take(ctx, k, l, at)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed != want.Allowed || got.Burst.Count != want.Burst.Count {
			t.Errorf("take %d at %v: redis Allowed=%v burst count %d; memory store Allowed=%v burst count %d",
				i, at.UTC(), got.Allowed, got.Burst.Count, want.Allowed, want.Burst.Count)
		}
	}
}

// TestAttack64CallerTimeAtUnixEpochReserve: the same for the client budget.
// Godoc: "CallerTime decides with the now passed in instead of Redis TIME".
// A Reserve at exactly the epoch books its admission at Redis's clock
// (today); the next Reserve, one second later by the caller's clock, is
// then told to wait decades, where the memory store says about 14 s.
func TestAttack64CallerTimeAtUnixEpochReserve(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 100}
	k := throttle.Key{User: "epoch-user", Title: "t", Scope: "s"}
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atkepochb", Timeout: 2 * time.Second}
	ms := &throttle.MemoryBudgetStore{}
	for i, at := range []time.Time{time.Unix(0, 0), time.Unix(1, 0)} {
		want, err := ms.Reserve(ctx, k, l, at, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Reserve(ctx, k, l, at, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed != want.Allowed || got.Wait != want.Wait {
			t.Errorf("reserve %d at %v: redis Allowed=%v Wait=%v; memory store Allowed=%v Wait=%v",
				i, at.UTC(), got.Allowed, got.Wait, want.Allowed, want.Wait)
		}
	}
}

// TestAttack64CallerTimeLearnBefore1970: a simulation driving time itself from
// the zero time.Time (year 1), as simulations often do. learn.lua once wrote
// the candidate's negative microseconds and could not read its own record
// back, so no limit was ever confirmed (the memory store confirms it).
// Helper 180 then found times that far from 1970 decided at times rounded
// to others (a double holds microseconds exactly only to 2^53): CallerTime
// now refuses a time outside 1970..2255 with a clear error rather than
// learn by a time it cannot hold (TestAttack65CallerTimeOutsideRangeRefused).
func TestAttack64CallerTimeLearnBefore1970(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atklearn", Timeout: 2 * time.Second}
	base := time.Time{}.Add(time.Hour)
	r := throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: "userA", At: base}
	if _, err := rs.Learn(ctx, r); err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "CallerTime decides from 1970-01-01") {
		t.Errorf("Learn at %v: %v; want CallerTime's range refused", base, err)
	}
	if _, err := rs.Learned(ctx, base); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("Learned at %v: %v; want CallerTime's range refused", base, err)
	}
}

// held: the same two reports at 2026 are confirmed by both stores (the
// control for the test above).
func TestAttack64CallerTimeLearnControl(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "atklearnc", Timeout: 2 * time.Second}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := rs.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: "userA", At: base}); err != nil {
		t.Fatal(err)
	}
	got, err := rs.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: "userB", At: base.Add(time.Second)})
	if err != nil || got.Limit != 7 {
		t.Errorf("Learn = %+v, %v; want limit 7 confirmed", got, err)
	}
}
