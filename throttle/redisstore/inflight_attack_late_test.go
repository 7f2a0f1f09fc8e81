package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestInflightQueuedLeaverBatchFails: callers queue, their batch is sent, they
// leave with their context's error; the batch's answer then comes later
// than Timeout, so the batch is settled with an error, but Redis ran every
// decision (the proxy delays only replies). At 07a679c only an answer
// without error was undone, so the slots of callers that got ctx.Err()
// stayed booked. Claim: "a caller that gets its context's error has either never
// been sent or is released once"; "the budget never counts an admission
// for a caller that left once the answers are in".
func TestInflightQueuedLeaverBatchFails(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			s, delay, k, l := slowedStore(t, honour, 300*time.Millisecond)
			other := throttle.Key{User: "other"}
			delay.Store(int64(time.Second))
			var wg sync.WaitGroup
			for range maxInFlight { // occupy both of the node's batches (another key)
				wg.Go(func() { s.Take(context.Background(), other, l, time.Now()) })
			}
			time.Sleep(40 * time.Millisecond)
			var ctxErrs, allowed atomic.Int64
			for range 6 { // queued; sent as one batch at ~300 ms; they leave at 400 ms
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
					defer cancel()
					a, err := s.Reserve(ctx, k, l, time.Now(), 0)
					switch {
					case errors.Is(err, context.DeadlineExceeded) && err == ctx.Err():
						ctxErrs.Add(1)
					case err == nil && a.Allowed:
						allowed.Add(1)
					default:
						t.Logf("queued caller: %v", err)
					}
				})
			}
			wg.Wait()
			delay.Store(0)
			time.Sleep(1500 * time.Millisecond) // the late replies have come; undos had their Timeout
			want := int(allowed.Load())
			got := countWhenAnswered(t, s, k, l, want)
			t.Logf("callers with ctx.Err(): %d, allowed: %d, budget counts: %d", ctxErrs.Load(), want, got)
			if ctxErrs.Load() > 0 && got != want {
				t.Errorf("budget counts %d admissions; callers were given %d (%d callers got their context's error after their decision was sent): slots of callers that left are never released when the batch's answer is an error (Timeout) although Redis ran it",
					got, want, ctxErrs.Load())
			}
		})
	}
}

// TestInflightLoneLeaverNearTimeout: a lone Reserve whose caller's deadline
// gives Redis at least half of Timeout, and ends before Redis answers.
// Reserve's doc at 07a679c said: "When ctx ends after the decision was
// sent and before its answer, Reserve returns ctx's error at once, and the
// slot, if one was booked, is released". Here exec's callersEnd is false,
// so the caller gets ErrUnavailable (not its context's error); at 07a679c
// the slot Redis booked was then never released.
func TestInflightLoneLeaverNearTimeout(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			s, delay, k, l := slowedStore(t, honour, 300*time.Millisecond)
			delay.Store(int64(time.Second))
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond) // >= Timeout/2
			start := time.Now()
			_, err := s.Reserve(ctx, k, l, time.Now(), 0)
			took := time.Since(start)
			cancel()
			if err == nil {
				t.Fatal("a 200 ms caller got an answer from a Redis 1 s late")
			}
			t.Logf("Reserve returned after %v: %v (is ctx.Err: %v)", took.Round(time.Millisecond), err, errors.Is(err, context.DeadlineExceeded))
			delay.Store(0)
			time.Sleep(1500 * time.Millisecond) // the late reply; the node's down time
			if got := countWhenAnswered(t, s, k, l, 0); got != 0 {
				t.Errorf("budget counts %d admissions after the only caller's context ended (it got %q); want 0: the slot was booked and never released", got, err)
			}
		})
	}
}

// TestInflightUndoRefusedByDownNode: the undo of a left caller's slot is a
// Release that goes through Store.run, so n.admit() would refuse it while
// the node is marked down, here by an unrelated lone call whose deadline
// ended (deadline >= Timeout/2, so it counts as the node's failure) while
// the left callers' batch was in flight. The claim held at 07a679c (exec
// marked the node up on the batch's good answer first) and holds now, the
// releases being sent even while the node is judged down.
func TestInflightUndoRefusedByDownNode(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			s, delay, k, l := slowedStore(t, honour, 500*time.Millisecond)
			other := throttle.Key{User: "other"}
			delay.Store(int64(400 * time.Millisecond))
			var wg sync.WaitGroup
			var allowed, ctxErrs atomic.Int64
			for range maxInFlight { // patient: answered at ~400 ms
				wg.Go(func() {
					if a, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
						t.Logf("patient caller: %v", err)
					} else if a.Allowed {
						allowed.Add(1)
					}
				})
			}
			time.Sleep(40 * time.Millisecond)
			for range 6 { // queued: sent at ~400 ms, leave at ~540 ms, answered (OK) at ~800 ms
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
					defer cancel()
					a, err := s.Reserve(ctx, k, l, time.Now(), 0)
					switch {
					case err == nil && a.Allowed:
						allowed.Add(1)
					case err != nil && err == ctx.Err():
						ctxErrs.Add(1)
					default:
						t.Logf("queued caller: %v", err)
					}
				})
			}
			time.Sleep(420 * time.Millisecond)
			// An unrelated lone call whose deadline (>= Timeout/2) ends at
			// ~720 ms: the node is marked down until ~1.7 s.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, terr := s.Take(ctx, other, l, time.Now())
			cancel()
			t.Logf("unrelated Take: %v", terr)
			wg.Wait()
			time.Sleep(600 * time.Millisecond) // the batch's answer (~800 ms) and its undos
			delay.Store(0)
			want := int(allowed.Load())
			got := countWhenAnswered(t, s, k, l, want)
			t.Logf("callers with ctx.Err(): %d, allowed: %d, budget counts: %d", ctxErrs.Load(), want, got)
			if ctxErrs.Load() > 0 && got != want {
				t.Errorf("budget counts %d admissions; callers were given %d: the undos of %d callers that left were refused by the node marked down",
					got, want, ctxErrs.Load())
			}
		})
	}
}

// TestInflightQueuedAloneLeaver: one caller queues behind two slow batches; the
// queue is sent as a batch of one, under the caller's own context, with
// more than Timeout/2 of its deadline left, so when the deadline ends the
// decision exec's callersEnd is false, the caller leaves with ctx.Err()
// from run's select, and the batch's answer is an error; Redis ran the
// decision, and at 07a679c its slot stayed booked.
func TestInflightQueuedAloneLeaver(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			s, delay, k, l := slowedStore(t, honour, 300*time.Millisecond)
			other := throttle.Key{User: "other"}
			delay.Store(int64(time.Second))
			var wg sync.WaitGroup
			for range maxInFlight { // both batches busy until their Timeout (~300 ms)
				wg.Go(func() { s.Take(context.Background(), other, l, time.Now()) })
			}
			time.Sleep(40 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond) // ends ~540 ms: 240 ms after its batch starts
			a, err := s.Reserve(ctx, k, l, time.Now(), 0)
			cancel()
			wg.Wait()
			t.Logf("queued caller: %+v, %v (its context's error: %v)", a, err, err != nil && err == ctx.Err())
			delay.Store(0)
			time.Sleep(1500 * time.Millisecond)
			got := countWhenAnswered(t, s, k, l, 0)
			if err != nil && err == ctx.Err() && got != 0 {
				t.Errorf("budget counts %d admissions; the only caller got its context's error (%v) after its decision was sent, and its slot was never released", got, err)
			} else if got != 0 {
				t.Errorf("budget counts %d admissions; the only caller got %v (no admission)", got, err)
			}
		})
	}
}
