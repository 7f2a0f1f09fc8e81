package replay

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/leakcheck"
	"github.com/xblgo/fgrl/limits"
	"go.uber.org/goleak"
)

// TestCancelMidReplay: cancelling the context while thousands of calls
// wait for their budget ends the run promptly with the context's error,
// leaving no goroutine behind, whatever the client and parts.
func TestCancelMidReplay(t *testing.T) {
	var p Pattern
	for u := range 500 { // 30,000 calls: the cancel comes at the 3,000th (1,500 users cost 32 s under -race in CI)
		user := strconv.Itoa(2533274790000001 + u)
		p = append(p, Event{At: 0, Service: "profile", User: user, Count: 30, Spread: time.Minute},
			Event{At: time.Second, Service: "presence/read", User: user, Count: 30, Spread: time.Minute})
	}
	for _, client := range append(Clients, Subscribed) {
		for _, parts := range []int{1, 2} {
			for _, co := range []bool{false, true} {
				for _, onStep := range []bool{false, true} {
					name := client + "/parts" + strconv.Itoa(parts) + "/coalesce" + strconv.FormatBool(co) + "/step" + strconv.FormatBool(onStep)
					t.Run(name, func(t *testing.T) {
						before := goleak.IgnoreCurrent()
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						var calls atomic.Int64
						o := Options{Limits: limits.Default(), Client: client, Parts: parts, Coalesce: co, NoKeys: true,
							OnCall: func(*Event, bool) {
								if calls.Add(1) == 3000 {
									cancel()
								}
							}}
						if onStep {
							o.OnStep = func(time.Time) {}
						}
						done := make(chan struct{})
						var err error
						go func() {
							defer close(done)
							_, err = Run(ctx, p, o)
						}()
						select {
						case <-done:
						case <-time.After(60 * time.Second):
							t.Fatalf("Run did not return within 60 s of the cancel (%d calls ended)", calls.Load())
						}
						if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
							t.Errorf("err %v; want context.Canceled", err)
						}
						goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
					})
				}
			}
		}
	}
}

// TestCancelFromOutside: a cancel from outside the virtual clock (a
// user's ^C), at real-time moments, while calls wait: Run returns with
// the context's error and leaves no goroutine.
func TestCancelFromOutside(t *testing.T) {
	var p Pattern
	for u := range 3000 {
		user := strconv.Itoa(2533274790000001 + u)
		p = append(p, Event{At: 0, Service: "profile", User: user, Count: 40, Spread: 2 * time.Minute},
			Event{At: 0, Service: "presence/read", User: user, Count: 20})
	}
	for _, client := range append(Clients, Subscribed) {
		for _, parts := range []int{1, 2} {
			for _, after := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 150 * time.Millisecond} {
				t.Run(client+"/"+strconv.Itoa(parts)+"/"+after.String(), func(t *testing.T) {
					before := goleak.IgnoreCurrent()
					ctx, cancel := context.WithTimeout(context.Background(), after)
					defer cancel()
					done := make(chan error, 1)
					go func() {
						_, err := Run(ctx, p, Options{Limits: limits.Default(), Client: client, Parts: parts, Coalesce: true, NoKeys: true, OnStep: func(time.Time) {}})
						done <- err
					}()
					select {
					case err := <-done:
						if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("err %v; want the deadline's", err)
						}
					case <-time.After(60 * time.Second):
						t.Fatal("Run did not return within 60 s")
					}
					goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
				})
			}
		}
	}
}

// TestCancelLeavesQueuedCallsUnmade: calls queued at one instant and not
// yet started when the context ends are not made. Before, each of them ran
// through the client to fail on the ended context: a ^C on a replay of
// 180,000 calls returned 1.3 s after it (9 s under the race detector),
// and here 100,000 calls ended after the cancel.
func TestCancelLeavesQueuedCallsUnmade(t *testing.T) {
	p := Pattern{{At: 0, Service: "profile", User: "2533274790000001", Count: 100_000}}
	for _, client := range append(Clients, Subscribed) {
		t.Run(client, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls atomic.Int64
			_, err := Run(ctx, p, Options{Limits: limits.Default(), Client: client, NoKeys: true,
				OnCall: func(*Event, bool) {
					if calls.Add(1) == 10 {
						cancel()
					}
				}})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err %v; want context.Canceled", err)
			}
			if after := calls.Load() - 10; after > 100 {
				t.Errorf("%d calls ended after the cancel; want only those under way (at most a worker each)", after)
			}
		})
	}
}
