package transport

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// slack is what a call may take past both its deadline and the store's
// Timeout: scheduling, under -race on 2 cores with the package's other
// tests running (150 ms was overrun once there).
const slack = 500 * time.Millisecond

// TestSilentRedisConcurrentTransport: the shared store is a Redis that
// accepts and never answers; 8 goroutines call at once for 1.5 s, a user
// per call, deadlines drawn from 20 ms to 300 ms (Timeout 400 ms). Promise
// (a): the outage is logged once, and in the last half second nearly every
// call is served on the local budget; (d) each call ends within its
// deadline or the store's Timeout.
func TestSilentRedisConcurrentTransport(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: redistest.Silent(t), MaxRetries: -1})
	defer rc.Close()
	var logs logBuffer
	tr := &Transport{Base: mock.NewHandler(), TitleID: title, RetryWindow: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Budget: &redisstore.Store{Client: rc, Timeout: 400 * time.Millisecond}}
	begin := time.Now()
	stop := begin.Add(1500 * time.Millisecond)
	var user, lateServed, lateTotal, overdue atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			i := 0
			for time.Now().Before(stop) {
				i++
				d := time.Duration(20+(g*37+i*53)%280) * time.Millisecond
				ctx, cancel := context.WithTimeout(context.Background(), d)
				start := time.Now()
				_, err := get(t, tr, ctx, profileURL, strconv.Itoa(2533274790000000+int(user.Add(1))))
				took := time.Since(start)
				cancel()
				if took > max(d, 400*time.Millisecond)+slack {
					overdue.Add(1)
				}
				if start.Sub(begin) > time.Second {
					lateTotal.Add(1)
					if err == nil {
						lateServed.Add(1)
					} else if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("call: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	n := strings.Count(logs.String(), "using a local budget")
	t.Logf("silent Redis, 8 goroutines: %d of %d calls in the last half second served; outage logged %d times; %d calls overdue", lateServed.Load(), lateTotal.Load(), n, overdue.Load())
	if n != 1 {
		t.Errorf("outage logged %d times, want 1", n)
	}
	if lateServed.Load() < lateTotal.Load()*9/10 {
		t.Errorf("silent Redis: only %d of %d calls in the last half second served on the local budget", lateServed.Load(), lateTotal.Load())
	}
	if overdue.Load() > 0 {
		t.Errorf("%d calls ended over %v past both their deadlines and the store's Timeout", overdue.Load(), slack)
	}
}

// TestStopContTransport: a redis-server of the test's own, stopped
// (SIGSTOP) while calls with 60 ms deadlines go through a transport, then
// continued (SIGCONT). Promise (a): served on the local budget while
// stopped, the outage logged once; (c): within about the probe interval of
// SIGCONT, decisions are shared again (each new user's call writes its key
// in Redis).
func TestStopContTransport(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client()
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer rc.Close()
	var logs logBuffer
	tr := &Transport{Base: mock.NewHandler(), TitleID: title, RetryWindow: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Budget: &redisstore.Store{Client: rc, Timeout: 400 * time.Millisecond}}
	u := 0
	call := func() error {
		u++
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
		defer cancel()
		_, err := get(t, tr, ctx, profileURL, strconv.Itoa(2533274790000000+u))
		return err
	}
	if err := call(); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	srv.Pause()
	served := 0
	for i := 0; i < 20; i++ {
		if call() == nil {
			served++
		}
	}
	if n := strings.Count(logs.String(), "using a local budget"); n != 1 || served < 8 {
		t.Errorf("stopped Redis: %d of 20 calls served, outage logged %d times; want most served, logged once", served, n)
	}
	srv.Resume()
	cont := time.Now()
	shared := time.Duration(-1)
	for time.Since(cont) < 4*time.Second {
		before := admin.DBSize(context.Background()).Val()
		call()
		if admin.DBSize(context.Background()).Val() > before {
			shared = time.Since(cont)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("stopped Redis: %d of 20 calls served; decisions shared again %v after SIGCONT", served, shared.Round(time.Millisecond))
	if shared < 0 || shared > 2500*time.Millisecond { // the 1 s probe, with room for scheduling
		t.Errorf("after SIGCONT, decisions shared again only after %v (−1: not in 4 s); want within about the 1 s probe interval", shared)
	}
}
