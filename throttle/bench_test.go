package throttle

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkServerTake is one decision on an existing key.
func BenchmarkServerTake(b *testing.B) {
	var s MemoryServerStore
	k := Key{"2533274791234567", "1234567890", "profile"}
	l := Limit{Burst: 10, Sustain: 30}
	s.take(k, l, t0)
	b.ReportAllocs()
	for b.Loop() {
		s.take(k, l, t0)
	}
}

// BenchmarkServerTakeParallel spreads decisions over many keys; compare
// -cpu 1 with -cpu 2 for the scaling figure. Each goroutine owns a disjoint
// slice of the keys, as independent callers (different users) would: a key
// written from both cores in turn would measure the cache-line transfer of its
// own state, which no store design avoids, rather than the store's overhead
// (its locks, its map) that sharding is meant to keep off the shared path.
func BenchmarkServerTakeParallel(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var s MemoryServerStore
			keys := makeKeys(n)
			l := Limit{Burst: 10, Sustain: 30}
			for _, k := range keys {
				s.take(k, l, t0)
			}
			procs := runtime.GOMAXPROCS(0)
			var seq atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				g := int(seq.Add(1)-1) % procs
				mine := keys[g*n/procs : (g+1)*n/procs]
				i := 0
				for pb.Next() {
					s.take(mine[i%len(mine)], l, t0)
					i += 7919
				}
			})
		})
	}
}

func BenchmarkBudgetReserve(b *testing.B) {
	var bu MemoryBudgetStore
	k := Key{"2533274791234567", "1234567890", "profile"}
	l := Limit{Burst: 10, Sustain: 30}
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(10 * time.Second) // always admitted: exercises the ring
		bu.Reserve(ctx, k, l, now, 0)
	}
}

// BenchmarkServerMemory reports the heap bytes per idle key held.
func BenchmarkServerMemory(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			keys := makeKeys(n)
			l := Limit{Burst: 10, Sustain: 30}
			b.ReportAllocs()
			var perKey float64
			for b.Loop() {
				before := heap()
				s := &MemoryServerStore{MaxKeys: 2 * n}
				for _, k := range keys {
					s.take(k, l, t0)
				}
				perKey = float64(heap()-before) / float64(n)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(perKey, "bytes/key")
		})
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func makeKeys(n int) []Key {
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key{User: fmt.Sprint(2533274790000000 + i), Title: "1234567890", Scope: "profile"}
	}
	return keys
}

// BenchmarkBudgetMemory reports the heap bytes per client-budget key after
// one admission each, for a service with a large sustain limit (300): the
// ring grows with use, so a rarely called key stays small.
func BenchmarkBudgetMemory(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			keys := makeKeys(n)
			l := Limit{Burst: 100, Sustain: 300}
			var perKey float64
			b.ReportAllocs()
			for b.Loop() {
				before := heap()
				bu := &MemoryBudgetStore{}
				for _, k := range keys {
					bu.Reserve(ctx, k, l, t0, 0)
				}
				perKey = float64(heap()-before) / float64(len(keys))
				runtime.KeepAlive(bu)
			}
			b.ReportMetric(perKey, "bytes/key")
		})
	}
}
