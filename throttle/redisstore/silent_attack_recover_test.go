package redisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// slackStop is what a call on a stopped Redis may take past its deadline:
// scheduling, with other tests or mutants running beside it on 2 cores.
const slackStop = 200 * time.Millisecond

// TestStopContRedis: a redis-server of the test's own, stopped with
// SIGSTOP (it accepts, and answers nothing) and continued with SIGCONT.
// Callers one at a time with 60 ms deadlines (under half the 400 ms
// Timeout). Promise (a): while stopped, the node is judged down within
// about the Timeout, and decisions then fail at once with ErrUnavailable;
// every call ends within its deadline. Promise (c): after SIGCONT, a
// decision succeeds again within about the probe interval.
func TestStopContRedis(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "ContextTimeoutEnabled"}[honour], func(t *testing.T) {
			rp := redistest.Start(t)
			c := redis.NewClient(&redis.Options{Addr: rp.Addr, MaxRetries: -1, ContextTimeoutEnabled: honour})
			defer c.Close()
			const timeout, deadline = 400 * time.Millisecond, 60 * time.Millisecond
			s := &Store{Client: c, Timeout: timeout}
			k := throttle.Key{User: "u", Title: "t", Scope: "s"}
			l := throttle.Limit{Burst: 100000, Sustain: 100000}
			call := func() (time.Duration, error) {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start := time.Now()
				_, err := s.Reserve(ctx, k, l, time.Now(), 0)
				return time.Since(start), err
			}
			if _, err := call(); err != nil {
				t.Fatalf("healthy: %v", err)
			}
			rp.Pause()
			stopped := time.Now()
			var downAt time.Duration = -1
			for time.Since(stopped) < 6*timeout {
				took, err := call()
				if took > deadline+slackStop { // scheduling: other tests (or mutants) may run beside it
					t.Errorf("a call on the stopped Redis took %v, over its %v deadline", took, deadline)
				}
				if errors.Is(err, ErrUnavailable) && took < deadline/2 {
					downAt = time.Since(stopped)
					break
				}
			}
			if downAt < 0 {
				t.Fatalf("stopped Redis not judged down within %v of short-deadline calls", 6*timeout)
			}
			rp.Resume()
			cont := time.Now()
			var upAt time.Duration = -1
			for time.Since(cont) < 4*time.Second {
				if _, err := call(); err == nil {
					upAt = time.Since(cont)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("judged down %v after SIGSTOP; a decision succeeded %v after SIGCONT", downAt.Round(time.Millisecond), upAt.Round(time.Millisecond))
			if upAt < 0 || upAt > 2*probeEvery+timeout {
				t.Errorf("after SIGCONT: a decision succeeded only after %v (−1: never in 4 s), want within about %v", upAt, probeEvery)
			}
		})
	}
}

// TestHealthyConcurrentMixedDeadlines: a healthy, fast redis-server and
// 24 goroutines deciding at once for 1.5 s (so decisions batch), each with
// a deadline drawn from 0.2 ms to 50 ms, a quarter cancelled mid-flight.
// Promise (b): no decision fails with ErrUnavailable (the node is never
// marked down by callers' own ends); promise (d): each call ends within
// its deadline plus a little, and goroutines return to the baseline.
func TestHealthyConcurrentMixedDeadlines(t *testing.T) {
	rp := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: rp.Addr, MaxRetries: -1})
	defer c.Close()
	s := &Store{Client: c, Timeout: 400 * time.Millisecond}
	l := throttle.Limit{Burst: 100000, Sustain: 100000}
	if _, err := s.Reserve(context.Background(), throttle.Key{User: "w", Title: "t", Scope: "s"}, l, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	var unavailable, ok, ended, late atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(1500 * time.Millisecond)
	for g := range 24 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for time.Now().Before(stop) {
				d := time.Duration(200+r.IntN(50_000)) * time.Microsecond
				ctx, cancel := context.WithTimeout(context.Background(), d)
				if r.IntN(4) == 0 {
					time.AfterFunc(d/2, cancel)
				}
				k := throttle.Key{User: string(rune('a' + r.IntN(20))), Title: "t", Scope: "s"}
				start := time.Now()
				_, err := s.Reserve(ctx, k, l, time.Now(), 0)
				if time.Since(start) > d+slack {
					late.Add(1)
				}
				cancel()
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ErrUnavailable):
					unavailable.Add(1)
				default:
					ended.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("healthy Redis, mixed deadlines: %d answered, %d ended by their callers, %d ErrUnavailable, %d late", ok.Load(), ended.Load(), unavailable.Load(), late.Load())
	if unavailable.Load() > 0 {
		t.Errorf("healthy Redis: %d decisions failed with ErrUnavailable (node marked down by callers' own ends); %d answered, %d ended by their callers", unavailable.Load(), ok.Load(), ended.Load())
	}
	if late.Load() > 0 {
		t.Errorf("%d calls ended over %v after their deadlines", late.Load(), slack)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		t.Errorf("%d goroutines 5 s after the calls ended, %d before", n, base)
	}
}
