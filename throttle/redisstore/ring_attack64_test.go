package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestAttack64RingDeadShardFailsOthers: a Ring of two shards, "a" a healthy
// Redis, "b" a server that answers PING (so the Ring keeps it) but hangs
// up on every script run. Godoc: "a Cluster's batches are one pipeline per
// node, so a slow or dead node delays only its own keys" and "A node whose
// batch fails is not tried again for a second: its keys fail at once with
// ErrUnavailable meanwhile"; Client may be "a *redis.Ring". The store
// keeps one circuit for the whole Ring: one failed decision on b's keys
// makes the keys of healthy shard a fail at once with ErrUnavailable for a
// second.
func TestAttack64RingDeadShardFailsOthers(t *testing.T) {
	srv := redistest.Start(t)
	var hangup atomic.Bool
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		if hangup.Load() {
			return "", true
		}
		return "-ERR fakeshard\r\n", false
	})
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:      map[string]string{"a": srv.Addr, "b": fake.addr()},
		MaxRetries: -1,
	})
	t.Cleanup(func() { ring.Close() })
	s := &Store{Client: ring, Prefix: "atkring2", Timeout: 2 * time.Second}
	ctx := context.Background()
	l := throttle.Limit{Burst: 1000, Sustain: 1000}

	// Find a user on each shard: b's answer is a plain error (the node is
	// still judged up).
	var onA, onB *throttle.Key
	for i := 0; i < 200 && (onA == nil || onB == nil); i++ {
		k := throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}
		_, err := s.Take(ctx, k, l, time.Now())
		switch {
		case err == nil && onA == nil:
			onA = &k
		case err != nil && strings.Contains(err.Error(), "fakeshard") && onB == nil:
			onB = &k
		case err != nil && !strings.Contains(err.Error(), "fakeshard"):
			t.Fatalf("unexpected: %v", err)
		}
	}
	if onA == nil || onB == nil {
		t.Fatal("no users found on both shards")
	}
	hangup.Store(true)
	if _, err := s.Take(ctx, *onB, l, time.Now()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Take on shard b: %v, want ErrUnavailable", err)
	}
	if _, err := s.Take(ctx, *onA, l, time.Now()); err != nil {
		t.Errorf("Take for %q on healthy shard a, right after shard b failed: %v", onA.User, err)
	}
}
