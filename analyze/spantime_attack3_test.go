package analyze_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
)

// attack3TimeSpans adds n calls of one user to profile.xboxlive.com, every
// 5 ms (all within one 300 s span), to an analyzer judging by lim, and
// returns how long adding and reporting took.
func attack3TimeSpans(t testing.TB, lim *limits.Limits, n int) time.Duration {
	t.Helper()
	a, err := analyze.New(lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	start := time.Now()
	for i := range n {
		a.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 5 * time.Millisecond), Method: "GET",
			URL: "https://profile.xboxlive.com/users/me/profile/settings", Authorization: "XBL3.0 x=1;tok", Status: 200})
	}
	a.AddInput(analyze.Input{Name: "atk", Calls: n})
	a.Report()
	return time.Since(start)
}

// BenchmarkSpansUnderHighLimits: analyze/doc.go (polling looks at
// consecutive calls, "not every pair of them"), RELIABILITY.md (reading
// linear in the length) and the limits data's own bound
// (throttle.MaxLimit, 100,000). Under limits whose profile rule is at that
// bound (a --limits file, or the limits a trace names with
// --trace-limits), call-frequency's spans once scanned every call within
// 300 s of each call in turn: 15,000 calls in one span took 1.5 s against
// 48 ms under the 2020 table (the third attack). Taken beside the 2020
// table; TestWindowsLinear is the check that can fail.
func BenchmarkSpansUnderHighLimits(b *testing.B) {
	high, err := limits.Read(strings.NewReader(`{"revision": "attack3-high", "source": "attack3",
		"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		lim  *limits.Limits
	}{{"2020", nil}, {"maxlimit", high}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				attack3TimeSpans(b, tc.lim, 15_000)
			}
		})
	}
}
