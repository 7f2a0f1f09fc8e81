package redisstore

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// TestWithinGoroutinesBounded: a server that accepts connections and
// never answers, clients that ignore context deadlines (README's plain
// client, and a Cluster client whose slot lookup hangs), Timeout 30 ms, and
// 64 callers calling Reset, ResetAll, Learned and Reserve in a loop for
// 1.5 s (thousands of calls, each given up by within after 30 ms). The
// goroutines within leaves behind must stay bounded by the clients' pools
// (not grow with the calls made), and all end once go-redis's own read
// timeout (300 ms here) passes.
func TestWithinGoroutinesBounded(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	plain := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond, PoolSize: 8})
	defer plain.Close()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{f.addr()}, MaxRedirects: -1, MaxRetries: -1, ReadTimeout: 300 * time.Millisecond, PoolSize: 8})
	defer cluster.Close()
	base := runtime.NumGoroutine()
	var calls, peak int
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(1500 * time.Millisecond)
	for g := range 64 {
		wg.Go(func() {
			s := &Store{Client: plain, Timeout: 30 * time.Millisecond}
			if g%2 == 1 {
				s = &Store{Client: cluster, Timeout: 30 * time.Millisecond}
			}
			k := throttle.Key{User: "u", Title: "t", Scope: "s"}
			n := 0
			for i := 0; time.Now().Before(end); i++ {
				switch i % 4 {
				case 0:
					s.Reset(context.Background(), k)
				case 1:
					if g%2 == 0 {
						s.ResetAll(context.Background()) // plain client only: a Cluster's is TestClusterResetAllBounded's
					}
				case 2:
					s.Learned(context.Background(), time.Now())
				case 3:
					s.Reserve(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now(), 0)
				}
				n++
				if i%8 == 0 {
					mu.Lock()
					peak = max(peak, runtime.NumGoroutine())
					mu.Unlock()
				}
			}
			mu.Lock()
			calls += n
			mu.Unlock()
		})
	}
	wg.Wait()
	left := runtime.NumGoroutine() - base
	t.Logf("%d calls; peak %d goroutines above %d; %d left as the callers returned", calls, peak-base, base, left)
	if peak-base > 64+200 {
		t.Errorf("peak of %d goroutines beyond the test's own for %d calls, want it bounded by the callers and pools", peak-base, calls)
	}
	// Left running: goroutines within started (or exec's) still in go-redis.
	abandoned := func() (int, string) {
		buf := make([]byte, 1<<20)
		all := string(buf[:runtime.Stack(buf, true)])
		n := 0
		for _, g := range strings.Split(all, "\n\n") {
			if strings.Contains(g, "redisstore.within") || strings.Contains(g, "redisstore.(*Store).exec") {
				n++
			}
		}
		return n, all
	}
	deadline := time.Now().Add(3 * time.Second)
	for n, _ := abandoned(); n > 0 && time.Now().Before(deadline); n, _ = abandoned() {
		time.Sleep(50 * time.Millisecond)
	}
	if n, all := abandoned(); n > 0 {
		t.Errorf("%d goroutines of within still running 3 s after the last call, want them ended with go-redis's read timeout (300 ms):\n%s", n, all)
	}
}
