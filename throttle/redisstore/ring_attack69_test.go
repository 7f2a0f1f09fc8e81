package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// attack69Keys counts the keys under prefix on one server.
func attack69Keys(t *testing.T, addr, prefix string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	keys, err := c.Keys(context.Background(), prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// attack69Ring is a Ring whose heartbeat marks a paused shard down quickly.
func attack69Ring(t *testing.T, addrs map[string]string) *redis.Ring {
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:              addrs,
		HeartbeatFrequency: 50 * time.Millisecond,
		DialTimeout:        200 * time.Millisecond,
		ReadTimeout:        200 * time.Millisecond,
		WriteTimeout:       200 * time.Millisecond,
		MaxRetries:         -1,
	})
	t.Cleanup(func() { ring.Close() })
	return ring
}

func attack69Live(ring *redis.Ring) int {
	live := 0
	var mu sync.Mutex
	ring.ForEachShard(context.Background(), func(context.Context, *redis.Client) error { mu.Lock(); live++; mu.Unlock(); return nil })
	return live
}

// TestAttack69RingResetAllAfterSetAddrsAddedShardDown: ResetAll godoc:
// "ResetAll forgets every key under the store's Prefix, on every node of a
// cluster or shard of a Ring ... A Ring with fewer shards up than its
// options' Addrs fails it (ErrUnavailable) once the live ones are
// cleared." A Ring made with shards a and b gets a third, c, by SetAddrs
// (go-redis's way to change a Ring's shards; Options() still returns the
// Addrs it was made with). Keys land on c; c stops answering and the Ring
// marks it down. ResetAll clears a and b, counts 2 shards up against
// Options().Addrs' 2, and returns nil: c's keys are all still there, a
// reset reported done that was not.
func TestAttack69RingResetAllAfterSetAddrsAddedShardDown(t *testing.T) {
	a, b, c := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	ring := attack69Ring(t, map[string]string{"a": a.Addr, "b": b.Addr})
	const prefix = "atkringadd"
	s := &Store{Client: ring, Prefix: prefix, Timeout: time.Second}
	ctx := context.Background()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	ring.SetAddrs(map[string]string{"a": a.Addr, "b": b.Addr, "c": c.Addr})
	for i := 0; i < 60; i++ {
		if _, err := s.Take(ctx, throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}, l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	onC := attack69Keys(t, c.Addr, prefix)
	if onC == 0 {
		t.Fatal("no key landed on the added shard c")
	}
	c.Pause()
	deadline := time.Now().Add(5 * time.Second)
	for attack69Live(ring) != 2 {
		if time.Now().After(deadline) {
			c.Resume()
			t.Skip("the Ring did not mark c down")
		}
		time.Sleep(50 * time.Millisecond)
	}
	err := s.ResetAll(ctx)
	c.Resume()
	time.Sleep(100 * time.Millisecond)
	leftA, leftB, leftC := attack69Keys(t, a.Addr, prefix), attack69Keys(t, b.Addr, prefix), attack69Keys(t, c.Addr, prefix)
	t.Logf("ResetAll with added shard c down: %v; left a %d, b %d, c %d (of %d)", err, leftA, leftB, leftC, onC)
	if err == nil && leftC != 0 {
		t.Errorf("ResetAll returned nil with shard c (added by SetAddrs) down: %d of its keys under the prefix remain", leftC)
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("ResetAll = %v, want ErrUnavailable (a shard of the Ring was down)", err)
	}
}

// TestAttack69RingResetAllAfterSetAddrsRemovedShard: ResetAll godoc: "A Ring
// with fewer shards up than its options' Addrs fails it (ErrUnavailable)";
// ErrUnavailable "wraps every failure to reach Redis or run a script". A
// Ring of a, b, c is set to a and b (SetAddrs), both up. ResetAll clears
// both, every shard the Ring has, and still fails with ErrUnavailable: "1 of
// the Ring's 3 shards are down: their keys were not forgotten" (no shard is
// down; Options().Addrs is the Ring's first set of shards, not its own).
// Every ResetAll on that Ring fails from then on.
func TestAttack69RingResetAllAfterSetAddrsRemovedShard(t *testing.T) {
	a, b, c := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	ring := attack69Ring(t, map[string]string{"a": a.Addr, "b": b.Addr, "c": c.Addr})
	const prefix = "atkringrm"
	s := &Store{Client: ring, Prefix: prefix, Timeout: time.Second}
	ctx := context.Background()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	ring.SetAddrs(map[string]string{"a": a.Addr, "b": b.Addr})
	for i := 0; i < 40; i++ {
		if _, err := s.Take(ctx, throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}, l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if live := attack69Live(ring); live != 2 {
		t.Fatalf("the Ring has %d shards up, want 2", live)
	}
	err := s.ResetAll(ctx)
	leftA, leftB := attack69Keys(t, a.Addr, prefix), attack69Keys(t, b.Addr, prefix)
	t.Logf("ResetAll: %v; left a %d, b %d", err, leftA, leftB)
	if leftA != 0 || leftB != 0 {
		t.Errorf("keys left: a %d, b %d", leftA, leftB)
	}
	if err != nil {
		t.Errorf("ResetAll on a Ring whose every shard is up and cleared = %v, want nil", err)
	}
}

// held: Store godoc: a Ring's "dead node ... delays only its own keys"; the
// node's shard "refreshed when the Ring's shard for an address changes"
// (commit 4df60b8: node.shard). While SetAddrs drops b and adds it again
// (a new client at the same address, the old one closed) under 8 busy
// callers, decisions may fail for a moment; within probeEvery after the
// last SetAddrs every key decides again, and b's keys are decided on b.
func TestAttack69RingSetAddrsReuseAddressHeld(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := attack69Ring(t, map[string]string{"a": a.Addr, "b": b.Addr})
	const prefix = "atkreuse"
	s := &Store{Client: ring, Prefix: prefix, Timeout: time.Second}
	l := throttle.Limit{Burst: 0, Sustain: 0}
	keys := make([]throttle.Key, 64)
	for i := range keys {
		keys[i] = throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var fails, oks atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := g; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				_, err := s.Take(ctx, keys[i%len(keys)], l, time.Now())
				cancel()
				if err != nil {
					fails.Add(1)
				} else {
					oks.Add(1)
				}
			}
		})
	}
	for i := 0; i < 10; i++ {
		time.Sleep(60 * time.Millisecond)
		if i%2 == 0 {
			ring.SetAddrs(map[string]string{"a": a.Addr})
		} else {
			ring.SetAddrs(map[string]string{"a": a.Addr, "b": b.Addr})
		}
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("during the flips: %d decided, %d failed", oks.Load(), fails.Load())
	beforeB := attack69Keys(t, b.Addr, prefix)
	bc := redis.NewClient(&redis.Options{Addr: b.Addr})
	defer bc.Close()
	bc.FlushAll(context.Background())
	for _, k := range keys {
		if _, err := s.Take(context.Background(), k, l, time.Now()); err != nil {
			t.Errorf("Take %v after the flips settled: %v", k.User, err)
		}
	}
	if n := attack69Keys(t, b.Addr, prefix); n == 0 {
		t.Errorf("no key decided on b after it was added back (it held %d before)", beforeB)
	}
}

// held: Store godoc: "a Ring's decisions go to their shards, so a slow or dead
// node (a Cluster master, a Ring's shard) delays only its own keys";
// Timeout: "A slow or unreachable Redis then fails fast"; BudgetStore
// godoc: "Every method must return once ctx is done". A Ring of a and b, b
// paused (SIGSTOP); 256 concurrent callers, one key each, each with a
// 200 ms context, twice. Every caller must return by its deadline (plus
// 150 ms of scheduling slack), and every key of a must be decided.
func TestAttack69RingStalledShard256CallersHeld(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}})
	t.Cleanup(func() { ring.Close() })
	s := &Store{Client: ring, Prefix: "atkstall"}
	l := throttle.Limit{Burst: 0, Sustain: 0}
	const n = 256
	keys := make([]throttle.Key, n)
	onA := make([]bool, n)
	for i := range keys {
		keys[i] = throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}
		c, err := ring.GetShardClientForKey(s.key(keys[i], "s"))
		if err != nil {
			t.Fatal(err)
		}
		onA[i] = c.Options().Addr == a.Addr
		if _, err := s.Take(context.Background(), keys[i], l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	b.Pause()
	defer b.Resume()
	for round := 0; round < 2; round++ {
		start := make(chan struct{})
		var wg sync.WaitGroup
		late := make([]time.Duration, n)
		errs := make([]error, n)
		for i := range keys {
			wg.Go(func() {
				<-start
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				d, _ := ctx.Deadline()
				_, errs[i] = s.Take(ctx, keys[i], l, time.Now())
				late[i] = time.Since(d)
			})
		}
		close(start)
		wg.Wait()
		var worst time.Duration
		aFail, aN := 0, 0
		for i := range keys {
			worst = max(worst, late[i])
			if late[i] > 150*time.Millisecond {
				t.Errorf("round %d: caller %d (on a: %v) returned %v past its deadline: %v", round, i, onA[i], late[i], errs[i])
			}
			if onA[i] {
				aN++
				if errs[i] != nil {
					aFail++
					if aFail <= 3 {
						t.Errorf("round %d: a's key %d failed: %v", round, i, errs[i])
					}
				}
			}
		}
		t.Logf("round %d: worst return %v past deadline; a's keys: %d of %d failed", round, worst, aFail, aN)
	}
}
