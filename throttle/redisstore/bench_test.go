package redisstore

import (
	"context"
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

// benchStore starts a redis-server and returns a store on it and 1000 keys
// to spread the load over.
func benchStore(b *testing.B) (*Store, []throttle.Key) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: benchClients, Protocol: 2})
	b.Cleanup(func() { c.Close() })
	keys := make([]throttle.Key, 1000)
	for i := range keys {
		keys[i] = throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "profile"}
	}
	return &Store{Client: c}, keys
}

// BenchmarkTake measures server-rule decisions through the store from 50
// concurrent callers against a local redis-server. The comparison with other
// clients and with redis-benchmark on the same server is in the bench module
// (BenchmarkRedisClients), which keeps those tools out of this module.
func BenchmarkTake(b *testing.B) {
	s, keys := benchStore(b)
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
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}

// setCallers makes RunParallel start benchClients goroutines whatever -cpu
// is (it starts parallelism × GOMAXPROCS): the same number of callers as
// redis-benchmark's -c.
func setCallers(b *testing.B) {
	p := runtime.GOMAXPROCS(0)
	if benchClients%p != 0 {
		b.Fatalf("%d callers cannot be spread evenly over GOMAXPROCS %d", benchClients, p)
	}
	b.SetParallelism(benchClients / p)
}

// BenchmarkReserve measures client-budget bookings the same way.
func BenchmarkReserve(b *testing.B) {
	s, keys := benchStore(b)
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

// BenchmarkTakeAlone measures server-rule decisions from one caller, which
// the store sends at once, alone, as one EVALSHA (no batching): what the
// store adds to a lone decision's round trip. Its client, go-redis as
// configured by default, does not honour context deadlines, so each
// decision's EVALSHA runs on a goroutine of its own that the store's
// Timeout bounds (see exec); bench's BenchmarkRedisClients runs the lone
// decision on a client that honours them (inline, no goroutine) beside
// go-redis alone.
func BenchmarkTakeAlone(b *testing.B) {
	s, keys := benchStore(b)
	l := throttle.Limit{Burst: 1 << 20, Sustain: 1 << 20}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Take(ctx, keys[i%len(keys)], l, time.Time{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
