package redisstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestQueuedCallerKeepsItsContext: while Redis sleeps 1 s with both of a
// node's batches in flight, a third caller queues. Its context ends after
// 50 ms; it must get its context's error then (its decision was never
// sent), not wait for a batch ahead of it to end.
func TestQueuedCallerKeepsItsContext(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	s := &Store{Client: c, Timeout: 3 * time.Second}
	l := throttle.Limit{Burst: 100, Sustain: 1000}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	if _, err := s.Take(context.Background(), k, l, time.Now()); err != nil {
		t.Fatal(err)
	}
	sleeper := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer sleeper.Close()
	var wg sync.WaitGroup
	wg.Go(func() { sleeper.Do(context.Background(), "DEBUG", "SLEEP", "1") })
	time.Sleep(100 * time.Millisecond)
	for range maxInFlight {
		wg.Go(func() { s.Take(context.Background(), k, l, time.Now()) })
	}
	time.Sleep(100 * time.Millisecond) // both batches are in flight
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Take(ctx, k, l, time.Now())
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || took > 300*time.Millisecond {
		t.Errorf("a queued Take whose context ends in 50 ms returned %v after %v, want its context's error within it", err, took)
	}
	wg.Wait()
	// The store still works, and the abandoned decision was never counted.
	d, err := s.Peek(context.Background(), k, l, time.Now())
	if err != nil || d.Burst.Count != 1+maxInFlight {
		t.Errorf("after: Peek = %+v, %v; want %d counted", d, err, 1+maxInFlight)
	}
}
