package redisstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// inflightSlack is how long past its deadline a caller may return: room
// for scheduling under -race and the mutation step on 2 cores, well under
// the 180 ms past it that a decision sent in a batch waited before.
const inflightSlack = 90 * time.Millisecond

// TestBatchedCallersEndByTheirDeadlines: a caller whose decision a batch
// has already sent returns when its own context ends, not when the batch's
// answer comes (which was up to the store's Timeout past its deadline), and
// a slot such a decision booked is given back when the answer comes, so
// the budget counts only the admissions callers were given.
func TestBatchedCallersEndByTheirDeadlines(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			rp := redistest.Start(t)
			var delay atomic.Int64
			px := redistest.Slowed(t, rp.Addr, &delay)
			c := redis.NewClient(&redis.Options{Addr: px, MaxRetries: -1, ContextTimeoutEnabled: honour, PoolSize: 8})
			defer c.Close()
			s := &Store{Client: c, Timeout: 2 * time.Second}
			k := throttle.Key{User: "u", Title: "t", Scope: "s"}
			l := throttle.Limit{Burst: 1000, Sustain: 1000}
			for range 4 { // warm connections (HELLO, the script's load)
				if _, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
					t.Fatalf("warm-up: %v", err)
				}
			}
			if err := s.Reset(context.Background(), k); err != nil {
				t.Fatal(err)
			}
			delay.Store(int64(300 * time.Millisecond))

			var allowed atomic.Int64
			var wg sync.WaitGroup
			for range maxInFlight { // patient callers: every batch a node runs at once
				wg.Go(func() {
					if a, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
						t.Errorf("patient caller: %v", err)
					} else if a.Allowed {
						allowed.Add(1)
					}
				})
			}
			time.Sleep(30 * time.Millisecond) // the patient callers' decisions are sent
			const deadline = 400 * time.Millisecond
			var late atomic.Int64
			var worst atomic.Int64
			for range 6 { // queued behind them; a batch takes them at ~300 ms and answers at ~600
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					defer cancel()
					dl, _ := ctx.Deadline()
					a, err := s.Reserve(ctx, k, l, time.Now(), 0)
					past := time.Since(dl)
					if past > time.Duration(worst.Load()) {
						worst.Store(int64(past))
					}
					if past > inflightSlack {
						late.Add(1)
					}
					if err == nil && a.Allowed {
						allowed.Add(1)
					}
				})
			}
			wg.Wait()
			if late.Load() > 0 {
				t.Errorf("%d of 6 callers queued behind a slow batch returned more than %v past their %v deadline (the worst %v past); want each to end with its context",
					late.Load(), inflightSlack, deadline, time.Duration(worst.Load()).Round(time.Millisecond))
			}
			// The abandoned decisions' answers come at ~600 ms; their slots
			// are given back within the Timeout after.
			delay.Store(0)
			want := int(allowed.Load())
			var got int
			for end := time.Now().Add(3 * time.Second); ; {
				snap, err := s.Snapshot(context.Background(), k, l, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if got = snap.Counts.Burst.Count; got == want || time.Now().After(end) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got != want {
				t.Errorf("budget counts %d admissions; callers were given %d: a slot booked for a caller that left was not given back", got, want)
			}
		})
	}
}

// TestLoneCallerLeavesNoSlot: a decision sent alone, under its caller's
// context, which ends before Redis answers, may still have booked a slot
// (Redis runs what it was sent): the slot is released, so the budget does
// not count a call that was never made.
func TestLoneCallerLeavesNoSlot(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			rp := redistest.Start(t)
			var delay atomic.Int64
			px := redistest.Slowed(t, rp.Addr, &delay)
			c := redis.NewClient(&redis.Options{Addr: px, MaxRetries: -1, ContextTimeoutEnabled: honour})
			defer c.Close()
			s := &Store{Client: c, Timeout: 2 * time.Second}
			k := throttle.Key{User: "u", Title: "t", Scope: "s"}
			l := throttle.Limit{Burst: 1000, Sustain: 1000}
			if _, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
				t.Fatalf("warm-up: %v", err)
			}
			if err := s.Reset(context.Background(), k); err != nil {
				t.Fatal(err)
			}
			delay.Store(int64(300 * time.Millisecond))
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_, err := s.Reserve(ctx, k, l, time.Now(), 0)
			cancel()
			if err == nil {
				t.Fatal("a 100 ms caller got an answer from a Redis 300 ms late")
			}
			delay.Store(0)
			var got int
			for end := time.Now().Add(3 * time.Second); ; {
				snap, err := s.Snapshot(context.Background(), k, l, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if got = snap.Counts.Burst.Count; got == 0 || time.Now().After(end) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got != 0 {
				t.Errorf("budget counts %d admissions after the only caller left with %v; want 0", got, err)
			}
		})
	}
}

// TestGiveBackBounded: a store runs at most maxUndoing releases at once;
// past it, a left caller's slot stays booked (spent, never overspent), and
// no goroutine is started. An answer that booked nothing is not released.
func TestGiveBackBounded(t *testing.T) {
	var released atomic.Int64
	s := &Store{Client: redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, MaxRetries: -1}), Timeout: time.Second}
	defer s.Client.Close()
	s.Client.AddHook(countReleases{&released})
	k := throttle.Key{User: "u"}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	if err := s.Release(context.Background(), k, l, 7); err != nil { // the script loaded (NOSCRIPT, then EVAL)
		t.Fatal(err)
	}
	released.Store(0)
	settled := func(running int64, sent int64) {
		t.Helper()
		for end := time.Now().Add(2 * time.Second); (s.undoing.Load() != running || released.Load() != sent) && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		if s.undoing.Load() != running || released.Load() != sent {
			t.Errorf("%d releases running, %d sent; want %d and %d", s.undoing.Load(), released.Load(), running, sent)
		}
	}
	s.undoing.Store(maxUndoing - 1)
	s.giveBack(context.Background(), k, l, 7)(nil) // the last place: sent
	settled(maxUndoing-1, 1)
	s.undoing.Store(maxUndoing)
	s.giveBack(context.Background(), k, l, 7)(nil) // no place left: not sent
	settled(maxUndoing, 1)
	s.undoing.Store(0)
	s.giveBack(context.Background(), k, l, 7)([]int64{0, 5, 0}) // refused: nothing booked
	settled(0, 1)
	s.giveBack(context.Background(), k, l, 7)([]int64{1, 0, 0, 7}) // booked
	settled(0, 2)
}

// countReleases counts the scripts a client sends.
type countReleases struct{ n *atomic.Int64 }

func (countReleases) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c countReleases) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c countReleases) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if name := cmd.Name(); name == "evalsha" || name == "eval" {
				c.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}
