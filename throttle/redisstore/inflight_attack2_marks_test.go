package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestInflight2StaleMarksDisableOvertakeGuard (claims 2 and 4): a release whose
// Reserve never reached Redis (the connection failed first) leaves a mark
// no Reserve ever takes. On a key kept busy, each reserve's expire()
// pushes meta's expiry ~301 s on, so such marks never expire; once 1,024
// of them sit in meta, a release that overtakes its Reserve leaves no mark
// and the Reserve books an admission nobody holds.
func TestInflight2StaleMarksDisableOvertakeGuard(t *testing.T) {
	rp := redistest.Start(t)
	c := rp.Client()
	s := &Store{Client: c, Timeout: time.Second}
	ctx := context.Background()
	k := throttle.Key{User: "busy"}
	l := throttle.Limit{Burst: 100000, Sustain: 100000}
	count := func() int {
		t.Helper()
		snap, err := s.Snapshot(ctx, k, l, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return snap.Counts.Sustain.Count
	}
	// The first stale mark, then the key kept busy past the 60 s a mark on
	// a fresh key would live (here: its expiry read after each reserve).
	if err := s.Release(ctx, k, l, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reserve(ctx, k, l, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(ctx, s.key(k, "meta")).Val(); ttl > 90*time.Second && c.HExists(ctx, s.key(k, "meta"), "r1").Val() {
		t.Logf("a mark no reserve will take now expires in %v, and each reserve pushes that on", ttl.Round(time.Second))
	}
	for id := int64(2); id <= 1100; id++ { // releases of reserves lost on the way (never run)
		if err := s.Release(ctx, k, l, id); err != nil {
			t.Fatal(err)
		}
		if id%100 == 0 {
			if _, err := s.Reserve(ctx, k, l, time.Now(), 0); err != nil { // ordinary traffic
				t.Fatal(err)
			}
		}
	}
	before := count()
	// Now a caller leaves; its release overtakes its Reserve.
	const id = 777777777
	if err := s.Release(ctx, k, l, id); err != nil {
		t.Fatal(err)
	}
	v, err := s.budget(ctx, opReserve, k, l, time.Now(), 0, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := count(); got != before || v[0] != 0 {
		t.Errorf("a Reserve overtaken by its release booked (answer %v; %d -> %d admissions): %d stale marks in meta left no room for its mark",
			v, before, got, c.HLen(ctx, s.key(k, "meta")).Val())
	}
}
