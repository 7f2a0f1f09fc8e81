package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attackStoreGoroutines counts the goroutines running the store's own code
// (work, undos, pipelines, checks), not the test's.
func attackStoreGoroutines() (int, string) {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	var sample string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "fgrl/throttle/redisstore.") && !strings.Contains(g, "redisstore.TestInflight") && !strings.Contains(g, "redisstore.attack") {
			n++
			if sample == "" {
				sample = g
			}
		}
	}
	return n, sample
}

// TestInflightLeaversStress: many Reserve callers with short, random deadlines
// (and some cancelled at random) against a Redis whose replies are slowed
// by a varying delay well under Timeout, so that every decision sent is
// answered. Checks, under the race detector: each call returns within its
// context (plus slack); the budget counts exactly the admissions callers
// were given once the answers and undos are in; the store's goroutines
// stay bounded while it runs, and none is left after.
func TestInflightLeaversStress(t *testing.T) {
	const slack = 150 * time.Millisecond
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			s, delay, k, l := slowedStore(t, honour, time.Second)
			l = throttle.Limit{Burst: 100000, Sustain: 100000}
			stop := make(chan struct{})
			var peak atomic.Int64
			var bg sync.WaitGroup
			bg.Go(func() { // the delay varies, 0 to 120 ms
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(25 * time.Millisecond):
					}
					delay.Store(int64(time.Duration(i%5) * 30 * time.Millisecond))
				}
			})
			bg.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
					if n, _ := attackStoreGoroutines(); int64(n) > peak.Load() {
						peak.Store(int64(n))
					}
				}
			})
			var allowed, late, errs atomic.Int64
			var worst atomic.Int64
			var wg sync.WaitGroup
			for wave := range 10 {
				for i := range 40 {
					wg.Go(func() {
						d := time.Duration(5+rand.IntN(250)) * time.Millisecond
						ctx, cancel := context.WithTimeout(context.Background(), d)
						defer cancel()
						if (wave+i)%4 == 0 {
							time.AfterFunc(time.Duration(rand.IntN(100))*time.Millisecond, cancel)
						}
						a, err := s.Reserve(ctx, k, l, time.Now(), 0)
						end := time.Now()
						dl, _ := ctx.Deadline()
						if past := end.Sub(dl); past > slack {
							late.Add(1)
							if int64(past) > worst.Load() {
								worst.Store(int64(past))
							}
						}
						if err == nil && a.Allowed {
							allowed.Add(1)
						} else if err != nil {
							errs.Add(1)
						}
					})
				}
				time.Sleep(60 * time.Millisecond)
			}
			wg.Wait()
			close(stop)
			bg.Wait()
			delay.Store(0)
			want := int(allowed.Load())
			got := countWhenAnswered(t, s, k, l, want)
			t.Logf("allowed %d, errors %d, budget counts %d, peak store goroutines %d, late %d (worst %v past its deadline)",
				want, errs.Load(), got, peak.Load(), late.Load(), time.Duration(worst.Load()).Round(time.Millisecond))
			if late.Load() > 0 {
				t.Errorf("%d callers returned more than %v past their deadline (worst %v)", late.Load(), slack, time.Duration(worst.Load()).Round(time.Millisecond))
			}
			if got != want {
				t.Errorf("budget counts %d admissions; callers were given %d", got, want)
			}
			if peak.Load() > 2*maxUndoing {
				t.Errorf("peak of %d store goroutines", peak.Load())
			}
			var n int
			var sample string
			for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if n, sample = attackStoreGoroutines(); n == 0 || time.Now().After(end) {
					break
				}
			}
			if n != 0 {
				t.Errorf("%d store goroutines left 5 s after every caller returned; one:\n%s", n, sample)
			}
		})
	}
}
