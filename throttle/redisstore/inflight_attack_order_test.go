package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestInflightLoneUndoOvertakesReserve: a lone Reserve is cancelled while Redis
// is paused; exec's callersEnd branch releases its admission id at once
// (undo(nil) -> Release on another goroutine and connection). Nothing
// orders that Release after the Reserve itself: the Reserve may still be
// written (go-redis without ContextTimeoutEnabled writes it once its new
// connection's handshake is answered, whatever its context) or may sit in
// another socket, and Redis serves the Release first, releasing nothing;
// then the Reserve books a slot no one holds. Claim attacked: a caller that
// gets its context's error is released (the release must follow the
// booking), and the budget counts no admission for a caller that left.
func TestInflightLoneUndoOvertakesReserve(t *testing.T) {
	for _, tc := range []struct {
		honour, warm bool
	}{{false, false}, {false, true}} { // with ContextTimeoutEnabled and open connections it held before the marks, in 16 s
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v/warm=%v", tc.honour, tc.warm), func(t *testing.T) {
			rp := redistest.Start(t)
			l := throttle.Limit{Burst: 1000, Sustain: 1000}
			{ // load the scripts into Redis with another client
				o := &Store{Client: rp.Client(), Timeout: time.Second}
				if _, err := o.Reserve(context.Background(), throttle.Key{User: "load"}, l, time.Now(), 0); err != nil {
					t.Fatal(err)
				}
			}
			const trials = 6
			leaked := 0
			var errs []string
			for i := range trials {
				c := redis.NewClient(&redis.Options{Addr: rp.Addr, MaxRetries: -1, ContextTimeoutEnabled: tc.honour, PoolSize: 4})
				s := &Store{Client: c, Timeout: time.Second}
				k := throttle.Key{User: fmt.Sprint("u", i)}
				if tc.warm {
					for range 2 {
						if _, err := s.Take(context.Background(), throttle.Key{User: "warm"}, l, time.Now()); err != nil {
							t.Fatal(err)
						}
					}
				}
				rp.Pause()
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(50*time.Millisecond, cancel)
				_, err := s.Reserve(ctx, k, l, time.Now(), 0)
				if err == nil {
					t.Fatal("a Reserve answered by a paused Redis")
				}
				if err != ctx.Err() {
					errs = append(errs, err.Error())
				}
				time.Sleep(100 * time.Millisecond) // the undo's Release is on its way
				rp.Resume()
				time.Sleep(300 * time.Millisecond)
				snap, serr := (&Store{Client: rp.Client(), Timeout: time.Second}).Snapshot(context.Background(), k, l, time.Now())
				if serr != nil {
					t.Fatal(serr)
				}
				if snap.Counts.Burst.Count != 0 {
					leaked++
				}
				c.Close()
			}
			t.Logf("%d of %d cancelled lone Reserves left a booked slot; errors other than the caller's context's: %q", leaked, trials, errs)
			if leaked > 0 {
				t.Errorf("%d of %d lone Reserves cancelled (caller got context.Canceled) left a slot booked: the release was served before the reservation", leaked, trials)
			}
		})
	}
}
