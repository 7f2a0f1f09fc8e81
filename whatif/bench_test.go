package whatif_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

// BenchmarkReplay replays a trace through fgrl: FGRL_BENCH_REPLAY_CALLS
// calls (else 20,000, a smoke run; BENCHMARKS.md records 2,000,000), one
// every 1.8 ms, by a user in a thousand calls (at least 200) to three
// services in turn. It reports the time per call replayed (the analyses
// before and after included) and the heap the replayer and its result
// hold at the end.
func BenchmarkReplay(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("FGRL_BENCH_REPLAY_CALLS")); err == nil && v > 0 {
		n = v
	}
	users := max(200, n/1000)
	urls := [...]string{"https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "https://profile.xboxlive.com/users/batch/profile/settings", "https://social.xboxlive.com/users/me/people"}
	methods := [...]string{"GET", "POST", "GET"}
	auths := make([]string, users)
	for u := range auths {
		auths[u] = "XBL3.0 x=" + strconv.Itoa(u) + ";R"
	}
	b.ReportAllocs()
	var heap uint64
	for b.Loop() {
		r, _ := whatif.New(nil, nil)
		var c analyze.Call
		for i := range n {
			c = analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 1800 * time.Microsecond), Method: methods[i%3], URL: urls[i%3],
				Authorization: auths[i%users], Status: 200}
			r.Add(&c)
		}
		res, err := r.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC() // what the replayer and its result hold, garbage gone
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = ms.HeapAlloc
		runtime.KeepAlive(r)
		runtime.KeepAlive(res)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
	b.ReportMetric(float64(heap>>20), "MiB-live-heap")
}
