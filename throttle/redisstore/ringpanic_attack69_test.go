package redisstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// held: commit 4df60b8: "a Ring's batches go to their shard's own client
// (go-redis runs a Ring pipeline on goroutines of its own, where a panic on
// an answer could not be recovered)"; ErrUnavailable "wraps every failure
// to reach Redis or run a script". A Ring whose one shard answers every
// command but the handshake and PING with a bulk string of length 2^63-2:
// concurrent Takes and Reserves (batched), Release, Snapshot, Reset,
// ResetAll, Learn and Learned all return ErrUnavailable, and the process
// lives. Run in a child process.
func TestAttack69RingPanicEveryOpHeld(t *testing.T) {
	if os.Getenv("ATTACK69_RING_PANIC") != "" {
		attack69RingPanicChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAttack69RingPanicEveryOpHeld$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ATTACK69_RING_PANIC=1")
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil || strings.Contains(s, "panic:") {
		if i := strings.Index(s, "panic"); i >= 0 {
			s = s[i:min(len(s), i+800)]
		}
		t.Errorf("child exited %v:\n%s", err, s)
	}
}

func attack69RingPanicChild(t *testing.T) {
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		time.Sleep(100 * time.Millisecond)
		return "$9223372036854775806\r\n", false
	})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"f": fake.addr()}, MaxRetries: -1})
	defer ring.Close()
	ctx := context.Background()
	l := throttle.Limit{Burst: 1, Sustain: 1}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	stores := []*Store{{Client: ring, Timeout: 2 * time.Second, Prefix: "p0"}, {Client: ring, Timeout: 2 * time.Second, Prefix: "p1"}}
	for i := range errs {
		s := stores[i%2] // one Store per prefix: its callers share its node's batches
		wg.Go(func() {
			k := throttle.Key{User: fmt.Sprintf("u%d", i), Title: "t", Scope: "s"}
			if i%2 == 0 {
				_, errs[i] = s.Take(ctx, k, l, time.Now())
			} else {
				_, errs[i] = s.Reserve(ctx, k, l, time.Now(), 0)
			}
		})
		if i < 4 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("decision %d = %v, want ErrUnavailable", i, err)
		}
	}
	s := &Store{Client: ring, Timeout: 2 * time.Second, CallerTime: true}
	time.Sleep(1100 * time.Millisecond) // past probeEvery: the node is tried again
	k := throttle.Key{User: "x", Title: "t", Scope: "s"}
	ops := map[string]func() error{
		"Release":  func() error { return s.Release(ctx, k, l, 5) },
		"Snapshot": func() error { _, err := s.Snapshot(ctx, k, l, time.Now()); return err },
		"Reset":    func() error { return s.Reset(ctx, k) },
		"ResetAll": func() error { return s.ResetAll(ctx) },
		"Learn": func() error {
			_, err := s.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: "a", At: time.Now()})
			return err
		},
		"Learned": func() error { _, err := s.Learned(ctx, time.Now()); return err },
	}
	for name, f := range ops {
		if err := f(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s = %v, want ErrUnavailable", name, err)
		}
	}
}
