package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// held: Godoc: "A node whose batch fails is not tried again for a second:
// its keys fail at once with ErrUnavailable meanwhile, then one call
// probes it." A server that hangs up on every script run: after the first
// failure, 64 concurrent callers (distinct users) during the next 800 ms
// all fail at once with ErrUnavailable and send the server nothing; after
// the second passes, a burst of 64 concurrent callers sends it exactly one
// script run (the probe), the others failing at once.
func TestAttack64ProbeOncePerSecond(t *testing.T) {
	var scripts atomic.Int64
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		if cmd[0] == "EVALSHA" || cmd[0] == "EVAL" {
			scripts.Add(1)
		}
		return "", true
	})
	c := redis.NewClient(&redis.Options{Addr: fake.addr(), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s := &Store{Client: c, Timeout: 500 * time.Millisecond}
	l := throttle.Limit{Burst: 10, Sustain: 10}
	ctx := context.Background()
	if _, err := s.Take(ctx, throttle.Key{User: "first"}, l, time.Now()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first Take: %v", err)
	}
	downAt := time.Now()
	sent := scripts.Load()
	burst := func(tag string) (fails int, slow time.Duration) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 64 {
			wg.Go(func() {
				start := time.Now()
				_, err := s.Take(ctx, throttle.Key{User: fmt.Sprintf("%s-%d", tag, i)}, l, time.Now())
				took := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				if errors.Is(err, ErrUnavailable) {
					fails++
				}
				slow = max(slow, took)
			})
		}
		wg.Wait()
		return
	}
	for time.Since(downAt) < 800*time.Millisecond {
		fails, slow := burst("down")
		if fails != 64 || slow > 50*time.Millisecond {
			t.Errorf("while down: %d of 64 failed with ErrUnavailable, slowest %v", fails, slow)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := scripts.Load(); got != sent {
		t.Errorf("the server got %d script runs within the second after the failure", got-sent)
	}
	time.Sleep(time.Until(downAt.Add(1100 * time.Millisecond)))
	sent = scripts.Load()
	fails, _ := burst("probe")
	if got := scripts.Load() - sent; got != 1 || fails != 64 {
		t.Errorf("after the second: %d script runs reached the server (want 1 probe), %d of 64 failed", got, fails)
	}
}

// held: Godoc: "A Store is safe for concurrent use"; "decisions that
// overlap more share their round trips and their script runs". 256
// callers, each its own user whose key holds a count of its own (user i:
// i+1 requests), Peek their counts 40 times each, concurrently, a third of
// them with contexts cancelled or timing out at random moments (0-300 µs).
// No Peek may get another's answer: each either fails with its own
// context's error or reports exactly its user's count.
func TestAttack64ConcurrentCancelledPeeksOwnAnswers(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	t.Cleanup(func() { c.Close() })
	s := &Store{Client: c, Prefix: "atkconc", Timeout: 2 * time.Second, CallerTime: true}
	l := throttle.Limit{Burst: 1000, Sustain: 1000}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	const n = 256
	keys := make([]throttle.Key, n)
	for i := range n {
		// Names with braces, colons, NULs and invalid UTF-8: the hash tag is a
		// digest, so none may share another's key.
		keys[i] = throttle.Key{User: fmt.Sprintf("u{%d}:\x00\xff%d", i%7, i), Title: "}{", Scope: fmt.Sprintf("s:%d", i%3)}
		for range i + 1 {
			if _, err := s.Take(ctx, keys[i], l, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wrong, answered, cancelled atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for range 20 { // 40 when helper 175 ran it
				cctx, cancel := context.WithCancel(ctx)
				switch rand.IntN(3) {
				case 0:
					time.AfterFunc(time.Duration(rand.IntN(300))*time.Microsecond, cancel)
				case 1:
					cctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(300))*time.Microsecond)
				}
				d, err := s.Peek(cctx, keys[i], l, now)
				cancel()
				switch {
				case err == nil:
					answered.Add(1)
					if d.Burst.Count != i+1 || d.Sustain.Count != i+1 {
						wrong.Add(1)
					}
				case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
					cancelled.Add(1)
				default:
					t.Errorf("user %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d answered, %d ended by their contexts", answered.Load(), cancelled.Load())
	if wrong.Load() != 0 {
		t.Errorf("%d Peeks got a count not their user's", wrong.Load())
	}
}
