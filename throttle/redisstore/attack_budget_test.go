package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestBlockInThePastKeepsTheBudget: Block with an until before now
// (a zero time, or a Retry-After date ten minutes old) changes nothing in
// the memory store; in Redis it expired the key's log at once (PEXPIRE with
// a negative time), so the next call was admitted though the burst was
// spent.
func TestBlockInThePastKeepsTheBudget(t *testing.T) {
	srv := redistest.Start(t)
	s := &Store{Client: srv.Client(), CallerTime: true}
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 10}
	now := time.Now()
	for name, until := range map[string]time.Time{"zero": {}, "ten minutes ago": now.Add(-10 * time.Minute)} {
		k := throttle.Key{User: "u", Title: "t", Scope: name}
		if a, err := s.Reserve(ctx, k, l, now, 0); err != nil || !a.Allowed {
			t.Fatalf("%s: first Reserve = %+v, %v", name, a, err)
		}
		if err := s.Block(ctx, k, now, until); err != nil {
			t.Fatalf("%s: Block: %v", name, err)
		}
		if a, err := s.Reserve(ctx, k, l, now.Add(time.Second), 0); err != nil || a.Allowed {
			t.Errorf("%s: a Block until %v let a second call through within the burst of 1: %+v, %v", name, until, a, err)
		}
	}
}

// TestExpiryNeverShortened: a key's structures must outlive what they
// hold. A Sync set both keys' expiry from now, and a Block from its own
// end: a 10-minute Retry-After block (MaxRetryAfter) then expired after
// about 5 minutes, and an admission booked 15 s ahead lost its log early.
func TestExpiryNeverShortened(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	s := &Store{Client: c, CallerTime: true}
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 100}
	now := time.Now()
	sustain := throttle.SustainPeriod + throttle.DefaultMargin

	k := throttle.Key{User: "u", Title: "t", Scope: "block"}
	if err := s.Block(ctx, k, now, now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx, k, l, now, throttle.Sustain, 5, 100*time.Second); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(ctx, s.key(k, "meta")).Val(); ttl < 10*time.Minute-5*time.Second {
		t.Errorf("after a 10-minute block and a Sync, the block's key expires in %v, want at least 10 minutes", ttl)
	}
	if snap, err := s.Snapshot(ctx, k, l, now); err != nil || snap.BlockedUntil.Before(now.Add(9*time.Minute)) {
		t.Errorf("Snapshot = %+v, %v; want blocked 10 minutes", snap, err)
	}

	k = throttle.Key{User: "u", Title: "t", Scope: "ahead"}
	if a, err := s.Reserve(ctx, k, l, now, 0); err != nil || !a.Allowed {
		t.Fatalf("Reserve = %+v, %v", a, err)
	}
	a, err := s.Reserve(ctx, k, l, now, 30*time.Second)
	if err != nil || !a.Allowed || a.Wait < 15*time.Second {
		t.Fatalf("Reserve ahead = %+v, %v; want booked about 16 s ahead", a, err)
	}
	want := a.Wait + sustain - 2*time.Second
	for _, op := range []string{"block", "sync"} {
		var err error
		if op == "block" {
			err = s.Block(ctx, k, now, now)
		} else {
			err = s.Sync(ctx, k, l, now, throttle.Sustain, 50, 100*time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		if ttl := c.PTTL(ctx, s.key(k, "log")).Val(); ttl < want {
			t.Errorf("after a %s, the log holding an admission %v ahead expires in %v, want at least %v", op, a.Wait, ttl, want)
		}
	}
}

// TestReadAndReleaseKeepTheLog: a Snapshot (a read) or a Release of a
// slot the key does not hold, with a smaller or zero Limit (another
// transport's limits, a stats page's), must not drop admissions: the memory
// store's Snapshot and Release take no notice of the limit, while Redis
// trimmed the log to that limit's size, so 2 more calls got through a burst
// of 3 already spent.
func TestReadAndReleaseKeepTheLog(t *testing.T) {
	srv := redistest.Start(t)
	s := &Store{Client: srv.Client(), CallerTime: true}
	ctx := context.Background()
	l := throttle.Limit{Burst: 3, Sustain: 10}
	now := time.Now()
	for _, op := range []string{"snapshot", "release"} {
		k := throttle.Key{User: "u", Title: "t", Scope: op}
		for i := range 3 {
			if a, err := s.Reserve(ctx, k, l, now.Add(time.Duration(i)*time.Millisecond), 0); err != nil || !a.Allowed {
				t.Fatalf("%s: Reserve %d = %+v, %v", op, i, a, err)
			}
		}
		var err error
		if op == "snapshot" {
			_, err = s.Snapshot(ctx, k, throttle.Limit{Burst: 1}, now)
		} else {
			err = s.Release(ctx, k, throttle.Limit{}, 12345)
		}
		if err != nil {
			t.Fatal(err)
		}
		admitted := 0
		for i := range 3 {
			if a, err := s.Reserve(ctx, k, l, now.Add(time.Second+time.Duration(i)*time.Millisecond), 0); err == nil && a.Allowed {
				admitted++
			}
		}
		if admitted != 0 {
			t.Errorf("after a %s with a smaller limit, %d more calls admitted within the 15 s burst of 3, want 0", op, admitted)
		}
	}
}
