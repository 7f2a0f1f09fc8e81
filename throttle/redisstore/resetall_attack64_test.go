package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestAttack64ResetAllNonUTF8Prefix: two stores on one Redis, Prefix "p\xff"
// (not UTF-8) and Prefix "p\uFFFD". ResetAll godoc: "ResetAll forgets every
// key under the store's Prefix". globEscape ranges over the prefix's runes,
// so the invalid byte becomes U+FFFD in the SCAN pattern: the first store's
// ResetAll forgets none of its own keys and all of the second store's.
func TestAttack64ResetAllNonUTF8Prefix(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	a := &Store{Client: c, Prefix: "p\xff", Timeout: 2 * time.Second}
	b := &Store{Client: c, Prefix: "p\uFFFD", Timeout: 2 * time.Second}
	for _, s := range []*Store{a, b} {
		for range 3 {
			if _, err := s.Take(ctx, k, l, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.ResetAll(ctx); err != nil {
		t.Fatal(err)
	}
	da, err := a.Peek(ctx, k, l, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db, err := b.Peek(ctx, k, l, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if da.Burst.Count != 0 {
		t.Errorf("after a.ResetAll, a's own key still counts %d (want 0)", da.Burst.Count)
	}
	if db.Burst.Count != 3 {
		t.Errorf("a.ResetAll (Prefix %q) reset b's key (Prefix %q): count %d, want 3", a.Prefix, b.Prefix, db.Burst.Count)
	}
}

// TestAttack64ResetAllRing: Client godoc: "Client is the Redis connection: a
// *redis.Client, *redis.ClusterClient or *redis.Ring"; ResetAll godoc:
// "ResetAll forgets every key under the store's Prefix, on every node of
// a cluster". With a Ring (one shard, a healthy Redis) ResetAll forgets
// nothing and fails.
func TestAttack64ResetAllRing(t *testing.T) {
	srv := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr}})
	t.Cleanup(func() { ring.Close() })
	ctx := context.Background()
	s := &Store{Client: ring, Prefix: "atkring", Timeout: 2 * time.Second}
	l := throttle.Limit{Burst: 100, Sustain: 100}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	if _, err := s.Take(ctx, k, l, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetAll(ctx); err != nil {
		t.Errorf("ResetAll on a Ring: %v", err)
	}
	d, err := s.Peek(ctx, k, l, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if d.Burst.Count != 0 {
		t.Errorf("after ResetAll, the key still counts %d", d.Burst.Count)
	}
}
