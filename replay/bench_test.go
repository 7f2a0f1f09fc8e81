package replay

import (
	"context"
	"testing"

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
