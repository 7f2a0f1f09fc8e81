package redisstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// attack65CountKeys counts the keys under prefix on one server.
func attack65CountKeys(t *testing.T, addr, prefix string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	keys, err := c.Keys(context.Background(), prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// TestAttack65RingResetAllSkipsDownShard: ResetAll godoc: "ResetAll forgets
// every key under the store's Prefix, on every node of a cluster or shard
// of a Ring (one after another)"; ErrUnavailable "wraps every failure to
// reach Redis". A Ring of two real servers; b stops answering (SIGSTOP, a
// partition) long enough for the Ring's heartbeat to mark it down. ResetAll
// lists shards with Ring.ForEachShard, which skips shards marked down: it
// returns nil, and when b answers again its keys under the prefix are all
// still there: a reset reported done that did not happen.
func TestAttack65RingResetAllSkipsDownShard(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:              map[string]string{"a": a.Addr, "b": b.Addr},
		HeartbeatFrequency: 50 * time.Millisecond,
		DialTimeout:        200 * time.Millisecond,
		ReadTimeout:        200 * time.Millisecond,
		WriteTimeout:       200 * time.Millisecond,
		MaxRetries:         -1,
	})
	t.Cleanup(func() { ring.Close() })
	const prefix = "atkringreset"
	s := &Store{Client: ring, Prefix: prefix, Timeout: time.Second}
	ctx := context.Background()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	for i := 0; i < 40; i++ {
		if _, err := s.Take(ctx, throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}, l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	onA, onB := attack65CountKeys(t, a.Addr, prefix), attack65CountKeys(t, b.Addr, prefix)
	if onA == 0 || onB == 0 {
		t.Fatalf("keys not on both shards: a %d, b %d", onA, onB)
	}
	b.Pause()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var live atomic.Int32 // ForEachShard calls on goroutines of its own
		ring.ForEachShard(ctx, func(context.Context, *redis.Client) error { live.Add(1); return nil })
		if live.Load() == 1 {
			break
		}
		if time.Now().After(deadline) {
			b.Resume()
			t.Skip("the Ring did not mark b down")
		}
		time.Sleep(50 * time.Millisecond)
	}
	err := s.ResetAll(ctx)
	b.Resume()
	time.Sleep(100 * time.Millisecond)
	leftA, leftB := attack65CountKeys(t, a.Addr, prefix), attack65CountKeys(t, b.Addr, prefix)
	t.Logf("ResetAll with b down: %v; keys left on a %d (of %d), on b %d (of %d)", err, leftA, onA, leftB, onB)
	if err == nil && (leftA != 0 || leftB != 0) {
		t.Errorf("ResetAll returned nil, but keys under the prefix remain: a %d, b %d (b was marked down by the Ring)", leftA, leftB)
	}
	if leftA != 0 {
		t.Errorf("live shard a kept %d keys", leftA)
	}
}

// held: ResetAll on a Ring of two live shards clears both.
func TestAttack65RingResetAllBothLiveHeld(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}, MaxRetries: -1})
	t.Cleanup(func() { ring.Close() })
	const prefix = "atk-ring*[x]"
	s := &Store{Client: ring, Prefix: prefix, Timeout: time.Second}
	other := &Store{Client: ring, Prefix: "atk-ringXY", Timeout: time.Second}
	ctx := context.Background()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	for i := 0; i < 40; i++ {
		k := throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}
		if _, err := s.Take(ctx, k, l, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Take(ctx, k, l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ResetAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{a.Addr, b.Addr} {
		c := redis.NewClient(&redis.Options{Addr: addr})
		keys, _ := c.Keys(ctx, "*").Result()
		c.Close()
		mine, others := 0, 0
		for _, k := range keys {
			if strings.HasPrefix(k, prefix+":") {
				mine++
			} else if strings.HasPrefix(k, "atk-ringXY:") {
				others++
			}
		}
		if mine != 0 || others == 0 {
			t.Errorf("%s after ResetAll: %d of the store's keys left, %d of another prefix's", addr, mine, others)
		}
	}
}

// TestAttack65RingBatchPanicCrashes: the commit's promise "a client panic on an
// answer's announced length is ErrUnavailable"; godoc: "ErrUnavailable
// wraps every failure to reach Redis or run a script", and Client may be "a
// *redis.Ring". A Ring whose shard answers script runs, late, with a bulk
// string of length 2^63-2. Decisions that overlap are batched; on a Ring a
// batch of several keys is a Ring pipeline, which go-redis runs on a
// goroutine of its own per shard, where the store's recover cannot reach:
// the process dies. Run in a child process.
func TestAttack65RingBatchPanicCrashes(t *testing.T) {
	if os.Getenv("ATTACK65_RING_PANIC") != "" {
		attack65RingPanicChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAttack65RingBatchPanicCrashes$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ATTACK65_RING_PANIC=1")
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil || strings.Contains(s, "panic") {
		if i := strings.Index(s, "panic"); i >= 0 {
			s = s[i:min(len(s), i+600)]
		}
		t.Errorf("10 concurrent Takes on a Ring whose shard answers a length of 2^63-2: child exited %v:\n%s", err, s)
	}
}

func attack65RingPanicChild(t *testing.T) {
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		time.Sleep(300 * time.Millisecond)
		return "$9223372036854775806\r\n", false
	})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"f": fake.addr()}, MaxRetries: -1})
	defer ring.Close()
	s := &Store{Client: ring, Timeout: 2 * time.Second}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = s.Take(context.Background(), throttle.Key{User: fmt.Sprintf("u%d", i), Title: "t", Scope: "s"}, throttle.Limit{Burst: 1, Sustain: 1}, time.Now())
		})
		if i < 2 {
			time.Sleep(20 * time.Millisecond) // the first two go alone; the rest queue
		}
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("Take %d = %v, want ErrUnavailable", i, err)
		}
	}
}
