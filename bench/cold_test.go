package bench

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
)

// codeFlag makes BenchmarkColdCall run evictCode between calls too, so
// that the call's instructions are cold as well as its data.
var codeFlag = flag.Bool("evictcode", false, "also run a spread of the standard library's code between calls, to evict the instruction cache")

// sink keeps evictCode's result, so that its work is not optimised away.
var sink int

// evictFlag is how many bytes BenchmarkColdCall writes between calls.
var evictFlag = flag.Int("evict", 256<<10, "the bytes BenchmarkColdCall writes between calls, to evict the caches")

// BenchmarkColdCall is BenchmarkNoRetry with the CPU's caches evicted
// before every call (it writes -evict bytes, 256 KiB: the first-level
// caches and part of the second), as a round trip through the kernel
// leaves them: it times each RoundTrip alone and reports its mean per
// contender (base-ns, fgrl-ns, ...). Over loopback fgrl costs several
// times what it costs in process (BENCHMARKS.md §1b); this shows how much
// of that a cold cache explains, in process, without a network's noise.
// The contenders take turns call by call; -contenders picks them
// (base, fgrl, fgrl-deadline, fgrl-nobudget). Writing data leaves the
// instructions of a small loop in the core's instruction cache, which a
// round trip through the kernel and net/http does not: -evictcode also
// runs other code between calls (evictCode).
func BenchmarkColdCall(b *testing.B) {
	lim, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	// A deadline before the transport's 20 s attempt timeout: it arms no
	// timer (as BenchmarkNoRetry's fgrl-deadline).
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs := slices.DeleteFunc([]loopbackContender{
		{name: "base", rt: okBase{}, reqs: requests(ctx, profileURL)},
		{name: "fgrl", rt: &transport.Transport{Base: okBase{}, Limits: lim, TitleID: "1234567890"}, reqs: requests(context.Background(), profileURL)},
		{name: "fgrl-deadline", rt: &transport.Transport{Base: okBase{}, Limits: lim, TitleID: "1234567890"}, reqs: requests(ctx, profileURL)},
		{name: "fgrl-nobudget", rt: &transport.Transport{Base: okBase{}, Limits: lim, TitleID: "1234567890", DisableBudget: true}, reqs: requests(ctx, profileURL)},
	}, func(c loopbackContender) bool { return !picked(c.name, false) })
	evict := make([]byte, max(*evictFlag, 64))
	took := make([]time.Duration, len(cs))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for k, c := range cs {
			for i := 0; i < len(evict); i += 64 {
				evict[i]++
			}
			if *codeFlag {
				sink += evictCode()
			}
			start := time.Now()
			resp, err := c.rt.RoundTrip(c.reqs[n%len(c.reqs)])
			took[k] += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		n++
	}
	for k, c := range cs {
		b.ReportMetric(float64(took[k].Nanoseconds())/float64(n), c.name+"-ns")
	}
}

// BenchmarkAttemptContext is what a per-request context costs warm: the
// cancellable one a bare call is given where its caller has no deadline,
// and the transport's attempt in that case, a cancellable context and a
// 20 s timer that ends it (transport/attempt.go's newAttempt, stopped on
// release) (BENCHMARKS.md §1b).
func BenchmarkAttemptContext(b *testing.B) {
	b.Run("cancel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			_ = ctx.Done() // as net/http reads it
			cancel()
		}
	})
	b.Run("attempt-timer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithCancelCause(context.Background())
			t := time.AfterFunc(20*time.Second, func() { cancel(context.DeadlineExceeded) })
			_ = ctx.Done()
			t.Stop()
			cancel(context.Canceled)
		}
	})
}
