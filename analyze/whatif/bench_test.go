package whatif_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/analyze/whatif"
)

// BenchmarkReplay replays a trace of 20,000 calls by 200 users to three
// services over a minute through fgrl; ns/op is per call replayed (the
// analyses before and after included). A trace of 2 million calls took
// 75 s on 2 cores (BENCHMARKS.md).
func BenchmarkReplay(b *testing.B) {
	const n = 20_000
	urls := [...]string{"https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "https://profile.xboxlive.com/users/batch/profile/settings", "https://social.xboxlive.com/users/me/people"}
	calls := make([]analyze.Call, n)
	for i := range calls {
		calls[i] = analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 3 * time.Millisecond), Method: "GET", URL: urls[i%3],
			Authorization: "XBL3.0 x=" + strconv.Itoa(i%200) + ";R", Status: 200}
	}
	b.ReportAllocs()
	for b.Loop() {
		r, _ := whatif.New(nil, nil)
		for i := range calls {
			r.Add(&calls[i])
		}
		if _, err := r.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
}
