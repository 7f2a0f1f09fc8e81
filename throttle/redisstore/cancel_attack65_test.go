package redisstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// held: exec's doc: "the goroutine ends when go-redis gives up (with
// ContextTimeoutEnabled, at the store's timeout)", and within's: "a ctx
// that can be cancelled, runs f in a goroutine the store stops waiting
// for". A silent server, ContextTimeoutEnabled, Timeout 300 ms; Reset,
// ResetAll, Learn and Learned cancelled at 20 ms return then with an error,
// and once the Timeout has passed no goroutine of theirs is left.
func TestAttack65CancelLeavesNoGoroutinesHeld(t *testing.T) {
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		return "", false // silent
	})
	c := redis.NewClient(&redis.Options{Addr: fake.addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s := &Store{Client: c, Timeout: 300 * time.Millisecond}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	ops := map[string]func(ctx context.Context) error{
		"Reset":    func(ctx context.Context) error { return s.Reset(ctx, k) },
		"ResetAll": func(ctx context.Context) error { return s.ResetAll(ctx) },
		"Learn": func(ctx context.Context) error {
			_, err := s.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 5, User: "x", At: time.Now()})
			return err
		},
		"Learned": func(ctx context.Context) error { _, err := s.Learned(ctx, time.Now()); return err },
	}
	// warm up: a first connection, dialled and failed
	s.Reset(context.Background(), k)
	time.Sleep(500 * time.Millisecond)
	base := runtime.NumGoroutine()
	for round := 0; round < 5; round++ {
		for name, op := range ops {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			start := time.Now()
			err := op(ctx)
			if took := time.Since(start); took > 200*time.Millisecond || err == nil {
				t.Errorf("%s cancelled at 20 ms: returned after %v with %v", name, took, err)
			}
		}
	}
	time.Sleep(time.Second)
	if n := runtime.NumGoroutine(); n > base+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d a second after 20 cancelled calls (Timeout 300 ms)\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}
}

// held: "a client panic on an answer's announced length is ErrUnavailable"
// (commit); ErrUnavailable "wraps every failure to reach Redis or run a
// script"; "A node whose batch fails is not tried again for a second: its
// keys fail at once with ErrUnavailable meanwhile, then one call probes
// it". A plain client, a server that answers script runs late with a bulk
// of length 2^63-2, and 150 concurrent Takes (batches over 64: a
// pipeline): every one returns ErrUnavailable, the node is then down
// (failing at once), and after the server answers sanely again and a
// second passes, decisions do not hang.
func TestAttack65PanicBatchManyCallersHeld(t *testing.T) {
	var sane atomic.Bool
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		if sane.Load() {
			return "-ERR sane now\r\n", false
		}
		time.Sleep(200 * time.Millisecond)
		return "$9223372036854775806\r\n", false
	})
	c := redis.NewClient(&redis.Options{Addr: fake.addr(), MaxRetries: -1, PoolSize: 4})
	t.Cleanup(func() { c.Close() })
	s := &Store{Client: c, Timeout: 2 * time.Second}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	var wg sync.WaitGroup
	errs := make([]error, 150)
	start := time.Now()
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = s.Take(context.Background(), throttle.Key{User: fmt.Sprintf("u%d", i), Title: "t", Scope: "s"}, l, time.Now())
		})
		if i < 2 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	wg.Wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("150 Takes took %v", took)
	}
	for i, err := range errs {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("Take %d = %v, want ErrUnavailable", i, err)
		}
	}
	k := throttle.Key{User: "later", Title: "t", Scope: "s"}
	if _, err := s.Take(context.Background(), k, l, time.Now()); err == nil || !strings.Contains(err.Error(), "is down") {
		t.Errorf("Take right after: %v, want the node down", err)
	}
	sane.Store(true)
	time.Sleep(1100 * time.Millisecond)
	done := make(chan error, 1)
	go func() { _, err := s.Take(context.Background(), k, l, time.Now()); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sane now") {
			t.Errorf("probe Take: %v, want the server's own error", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("probe Take hangs")
	}
}
