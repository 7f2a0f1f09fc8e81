package redisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// slack is what a call may take past both its deadline and the store's
// Timeout: scheduling, under -race on 2 cores with the package's other
// tests running (150 ms was overrun once there).
const slack = 500 * time.Millisecond

// TestSilentConcurrentMixedDeadlines: a server that accepts and never
// answers, and 16 goroutines deciding at once for 2 s (so decisions queue
// and batch), each with a deadline drawn from 5 ms to 300 ms (Timeout
// 400 ms), a fifth cancelled early. Promise (a): the node is judged down,
// so in the last second at most a few decisions (the probes, one a second)
// end otherwise than with ErrUnavailable. Promise (d), as RELIABILITY.md
// bounds it: a call ends within its deadline, or, once its decision was
// sent in a batch, within the store's Timeout; the largest overrun past the
// caller's own deadline is logged.
func TestSilentConcurrentMixedDeadlines(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "ContextTimeoutEnabled"}[honour], func(t *testing.T) {
			f := startFakeRedis(t, func([]string) string { return "" })
			c := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1, ContextTimeoutEnabled: honour})
			defer c.Close()
			const timeout = 400 * time.Millisecond
			s := &Store{Client: c, Timeout: timeout}
			l := throttle.Limit{Burst: 100, Sustain: 100}
			begin := time.Now()
			stop := begin.Add(2 * time.Second)
			var late, waited, total, overrun atomic.Int64
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 11))
					for time.Now().Before(stop) {
						d := time.Duration(5+r.IntN(295)) * time.Millisecond
						ctx, cancel := context.WithTimeout(context.Background(), d)
						if r.IntN(5) == 0 {
							time.AfterFunc(d/3, cancel)
						}
						k := throttle.Key{User: string(rune('a' + r.IntN(8))), Title: "t", Scope: "s"}
						start := time.Now()
						_, err := s.Reserve(ctx, k, l, time.Now(), 0)
						took := time.Since(start)
						cancel()
						for o := int64(took - d); o > overrun.Load() && !overrun.CompareAndSwap(overrun.Load(), o); {
						}
						if took > max(d, timeout)+slack {
							if late.Add(1) <= 3 {
								t.Logf("late: %v after %v (deadline %v)", err, took.Round(time.Millisecond), d)
							}
						}
						if start.Sub(begin) > time.Second {
							total.Add(1)
							if !errors.Is(err, ErrUnavailable) {
								if waited.Add(1) <= 4 {
									t.Logf("not refused at once, %v in: %v after %v (deadline %v)", start.Sub(begin).Round(time.Millisecond), err, took.Round(time.Millisecond), d)
								}
							}
						}
						time.Sleep(time.Millisecond) // a caller's own work between calls
					}
				})
			}
			wg.Wait()
			t.Logf("silent Redis, 16 goroutines: in the last second %d of %d calls not refused at once; %d calls past max(deadline, Timeout)+slack; largest overrun past a caller's deadline %v",
				waited.Load(), total.Load(), late.Load(), time.Duration(overrun.Load()).Round(time.Millisecond))
			if late.Load() > 0 {
				t.Errorf("%d calls ended over %v past both their deadlines and the store's Timeout", late.Load(), slack)
			}
			if waited.Load() > 4 {
				t.Errorf("silent Redis, 16 goroutines: %d of %d calls in the last second were not refused at once; want it judged down (at most a probe or two)", waited.Load(), total.Load())
			}
		})
	}
}
