package redisstore

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

const benchClients = 50

// BenchmarkTake measures server-rule decisions through the store from 50
// concurrent callers against a local redis-server, then runs redis-benchmark
// with a trivial EVALSHA (return 1) at the same concurrency on the same
// server, and reports the ratio of the two rates (x-evalsha; target 0.7).
// Run it with -cpu 1 on a 2-core machine: redis-benchmark is single-threaded,
// and a client on both cores would take the server's.
// benchStore starts a redis-server and returns a store on it, its client
// and 1000 keys to spread the load over.
func benchStore(b *testing.B) (*Store, *redis.Client, string, []throttle.Key) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: benchClients, Protocol: 2})
	b.Cleanup(func() { c.Close() })
	keys := make([]throttle.Key, 1000)
	for i := range keys {
		keys[i] = throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "profile"}
	}
	return &Store{Client: c}, c, srv.Addr, keys
}

func BenchmarkTake(b *testing.B) {
	s, c, addr, keys := benchStore(b)
	l := throttle.Limit{Burst: 1 << 20, Sustain: 1 << 20}
	var n atomic.Int64
	setCallers(b)
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := s.Take(ctx, keys[n.Add(1)%int64(len(keys))], l, time.Time{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	ours := float64(b.N) / time.Since(start).Seconds()
	b.StopTimer() // ns/op is ours alone; redis-benchmark runs after
	b.ReportMetric(ours, "decisions/s")
	if theirs, err := evalshaRate(c, addr, max(b.N, 20000)); err == nil {
		b.ReportMetric(theirs, "evalsha/s")
		b.ReportMetric(ours/theirs, "x-evalsha")
	} else {
		b.Logf("redis-benchmark: %v", err)
	}
}

// setCallers makes RunParallel start benchClients goroutines whatever -cpu
// is (it starts parallelism × GOMAXPROCS): the same number of callers as
// redis-benchmark's -c.
func setCallers(b *testing.B) {
	if p := runtime.GOMAXPROCS(0); benchClients%p != 0 {
		b.Fatalf("%d callers cannot be spread evenly over GOMAXPROCS %d", benchClients, p)
	}
	b.SetParallelism(benchClients / runtime.GOMAXPROCS(0))
}

var rps = regexp.MustCompile(`([0-9.]+) requests per second`)

// evalshaRate runs redis-benchmark with a trivial script.
func evalshaRate(c *redis.Client, addr string, n int) (float64, error) {
	sha, err := c.ScriptLoad(context.Background(), "return 1").Result()
	if err != nil {
		return 0, err
	}
	host, port := addr[:len(addr)-len(portOf(addr))-1], portOf(addr)
	out, err := exec.Command("redis-benchmark", "-h", host, "-p", port, "-c", strconv.Itoa(benchClients),
		"-n", strconv.Itoa(n), "-q", "evalsha", sha, "0").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	m := rps.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("no rate in %q", out)
	}
	return strconv.ParseFloat(string(m[len(m)-1][1]), 64)
}

func portOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[i+1:]
		}
	}
	return addr
}

// BenchmarkReserve measures client-budget bookings the same way.
func BenchmarkReserve(b *testing.B) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: benchClients, Protocol: 2})
	defer c.Close()
	s := &Store{Client: c}
	keys := make([]throttle.Key, 1000)
	for i := range keys {
		keys[i] = throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "profile"}
	}
	l := throttle.Limit{Burst: 100, Sustain: 300}
	var n atomic.Int64
	setCallers(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := s.Reserve(ctx, keys[n.Add(1)%int64(len(keys))], l, time.Time{}, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
