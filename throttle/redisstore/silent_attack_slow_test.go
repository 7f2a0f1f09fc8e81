package redisstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestSlowRedisShortDeadlinesNotDown: a healthy redis-server behind a
// proxy that holds each answer 40 ms (slowed, but answering well within the
// store's 400 ms Timeout), and callers one at a time whose deadlines (20 ms)
// end before the answer. Promise (b): such a Redis is never marked down by
// callers' short deadlines; a caller with time to wait must then be
// answered by Redis, not fail at once with ErrUnavailable.
func TestSlowRedisShortDeadlinesNotDown(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "ContextTimeoutEnabled"}[honour], func(t *testing.T) {
			rp := redistest.Start(t)
			var delay atomic.Int64
			delay.Store(int64(40 * time.Millisecond))
			px := redistest.Slowed(t, rp.Addr, &delay)
			c := redis.NewClient(&redis.Options{Addr: px, MaxRetries: -1, ContextTimeoutEnabled: honour})
			defer c.Close()
			s := &Store{Client: c, Timeout: 400 * time.Millisecond}
			k := throttle.Key{User: "u", Title: "t", Scope: "s"}
			l := throttle.Limit{Burst: 1000, Sustain: 1000}
			// warm the connection (HELLO etc.) with a patient caller
			if _, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
				t.Fatalf("warm-up: %v", err)
			}
			unavailable := 0
			for i := range 30 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				_, err := s.Reserve(ctx, k, l, time.Now(), 0)
				cancel()
				if errors.Is(err, ErrUnavailable) {
					unavailable++
				}
				_ = i
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err := s.Reserve(ctx, k, l, time.Now(), 0)
			cancel()
			if err != nil || unavailable > 0 {
				t.Errorf("slowed but answering Redis (40 ms, Timeout 400 ms): %d of 30 short-deadline calls got ErrUnavailable, then a 1 s caller got %v; want the node never marked down", unavailable, err)
			}
		})
	}
}

// TestSocketDeadlineBeatsContext: a client with ContextTimeoutEnabled
// sets the caller's deadline on its socket, and the read can fail ("i/o
// timeout") before the context's own timer marks it done. One caller's
// short deadline (20 ms) on a healthy Redis slowed to 40 ms must then still
// be the caller's own end: a patient caller right after must be answered,
// not refused at once with ErrUnavailable (the node marked down by one
// caller's deadline). 10 trials, each on a fresh store.
func TestSocketDeadlineBeatsContext(t *testing.T) {
	rp := redistest.Start(t)
	var delay atomic.Int64
	delay.Store(int64(40 * time.Millisecond))
	px := redistest.Slowed(t, rp.Addr, &delay)
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1000, Sustain: 1000}
	down := 0
	var last error
	for range 10 {
		c := redis.NewClient(&redis.Options{Addr: px, MaxRetries: -1, ContextTimeoutEnabled: true})
		s := &Store{Client: c, Timeout: 400 * time.Millisecond}
		if _, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		s.Reserve(ctx, k, l, time.Now(), 0)
		cancel()
		if _, err := s.Reserve(context.Background(), k, l, time.Now(), 0); errors.Is(err, ErrUnavailable) {
			down++
			last = err
		}
		c.Close()
	}
	if down > 0 {
		t.Errorf("ContextTimeoutEnabled, Redis slowed to 40 ms: after one caller's 20 ms deadline, a patient caller got ErrUnavailable in %d of 10 trials (%v); want the node never marked down by one caller's deadline", down, last)
	}
}
