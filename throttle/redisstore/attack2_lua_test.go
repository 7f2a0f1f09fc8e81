package redisstore

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestKeysExpiryCoversBudget: 3,000 random budget operations on one key
// (reserves booked up to 2 minutes ahead, releases, blocks ending in the
// past or up to 10 minutes ahead, syncs of either window, snapshots, limits
// changing from 1 to 500), the caller's clock moving 0 to 20 s a step.
// After each: neither key lives forever (a TTL on every key that exists);
// the log outlives its newest admission's sustain window and the meta hash
// its block; the log never holds more than the largest limit any reserve or
// sync used (500); and no key is kept longer than the latest of those ends
// plus a sustain window (no unbounded memory from a stale end).
func TestKeysExpiryCoversBudget(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	s := &Store{Client: c, CallerTime: true, Margin: -1}
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	logKey, metaKey := s.key(k, "log"), s.key(k, "meta")
	now := time.Now()
	var slots []int64
	const sp = 300 * time.Second
	for i := range 3000 {
		now = now.Add(time.Duration(rand.IntN(20_000)) * time.Millisecond)
		l := throttle.Limit{Burst: 1 + rand.IntN(20), Sustain: 1 + rand.IntN(500)}
		var err error
		switch op := rand.IntN(6); op {
		case 0, 1:
			var a throttle.Admission
			a, err = s.Reserve(ctx, k, l, now, time.Duration(rand.IntN(120))*time.Second)
			if a.Allowed {
				slots = append(slots, a.Slot)
			}
		case 2:
			if len(slots) > 0 {
				err = s.Release(ctx, k, l, slots[rand.IntN(len(slots))])
			}
		case 3:
			err = s.Block(ctx, k, now, now.Add(time.Duration(rand.IntN(1200)-600)*time.Second))
		case 4:
			p := throttle.Burst
			if rand.IntN(2) == 0 {
				p = throttle.Sustain
			}
			err = s.Sync(ctx, k, l, now, p, rand.IntN(600), time.Duration(1+rand.Int64N(int64(p.Duration()))))
		case 5:
			_, err = s.Snapshot(ctx, k, l, now)
		}
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		nowUs := now.UnixMicro()
		for _, key := range []string{logKey, metaKey} {
			ttl := c.PTTL(ctx, key).Val()
			if ttl == -1 {
				t.Fatalf("op %d: %s has no expiry", i, key)
			}
		}
		var ends []int64 // ends that must be covered, in caller µs
		if z := c.ZRangeWithScores(ctx, logKey, -1, -1).Val(); len(z) == 1 {
			newest := int64(z[0].Score) + sp.Microseconds()
			ends = append(ends, newest)
			if ttl := c.PTTL(ctx, logKey).Val(); (newest-nowUs)/1000 > ttl.Milliseconds()+50 {
				t.Fatalf("op %d: the log expires in %v, before its newest admission's window ends in %v", i, ttl, time.Duration(newest-nowUs)*time.Microsecond)
			}
		}
		if b, err := c.HGet(ctx, metaKey, "blocked").Result(); err == nil {
			bl, _ := strconv.ParseFloat(b, 64)
			ends = append(ends, int64(bl)+sp.Microseconds())
			if ttl := c.PTTL(ctx, metaKey).Val(); int64(bl) > nowUs && (int64(bl)-nowUs)/1000 > ttl.Milliseconds()+50 {
				t.Fatalf("op %d: the block expires in %v, before it ends in %v", i, ttl, time.Duration(int64(bl)-nowUs)*time.Microsecond)
			}
		}
		if n := c.ZCard(ctx, logKey).Val(); n > 2*500 { // twice the largest limit once a call was booked ahead into a full log (reserve.lua)
			t.Fatalf("op %d: the log holds %d admissions, more than twice any limit", i, n)
		}
		latest := nowUs + sp.Microseconds()
		for _, e := range ends {
			latest = max(latest, e)
		}
		for _, key := range []string{logKey, metaKey} {
			if ttl := c.PTTL(ctx, key).Val(); ttl > 0 && ttl.Milliseconds() > (latest-nowUs)/1000+sp.Milliseconds()+2000 {
				t.Fatalf("op %d: %s kept %v, more than a sustain window past its latest end (%v)", i, key, ttl, time.Duration(latest-nowUs)*time.Microsecond)
			}
		}
	}
}
