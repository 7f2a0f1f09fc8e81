package replay

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
)

// BenchmarkPriorities is the interactive calls' added wait, in virtual
// time, with a background flood on the same user and service: 60 profile
// reads of a job over a minute beside 6 interactive reads, the job marked
// background (transport.Background) or not. It reports the interactive
// calls' longest wait and how many of them were refused locally (unmarked,
// the job's calls count as interactive too), beside
// the cost of simulating the run.
func BenchmarkPriorities(b *testing.B) {
	for _, marked := range []bool{true, false} {
		b.Run(map[bool]string{true: "background-marked", false: "unmarked"}[marked], func(b *testing.B) {
			p := Pattern{
				{At: 0, Service: "profile", User: ExampleUser, Count: 60, Spread: 60e9, Background: marked},
				{At: 5e9, Service: "profile", User: ExampleUser, Count: 6, Spread: 90e9},
			}
			var res Result
			b.ReportAllocs()
			for b.Loop() {
				var err error
				res, err = Run(context.Background(), p, Options{Limits: limits.Default(), Client: "fgrl"})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(res.Interactive.MaxMs, "interactive-max-wait-ms")
			b.ReportMetric(float64(res.Interactive.Refused), "interactive-refused")
		})
	}
}

// BenchmarkSummarize: the delays of 2,000,000 calls, 60 % of them delayed,
// read as one priority's over 20 services (a what-if's end).
func BenchmarkSummarize(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := make([]Delay, 20)
	for i := range 2_000_000 {
		took := time.Duration(0)
		if i%5 < 3 {
			took = time.Duration(1 + rng.Int64N(int64(300*time.Second)))
		}
		ds[i%20].add(took, served)
	}
	ptrs := make([]*Delay, len(ds))
	for i := range ds {
		ptrs[i] = &ds[i]
	}
	summarize(ptrs...) // sorts them: what each run after reads
	b.ReportAllocs()
	for b.Loop() {
		summarize(ptrs...)
	}
}
