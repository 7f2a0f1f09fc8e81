package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
)

// goroutinesCreated reads the runtime's count of goroutines ever created.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// loopbackContender is one RoundTripper of the loopback benchmarks, with the
// requests it sends.
type loopbackContender struct {
	name string
	rt   http.RoundTripper
	reqs []*http.Request
}

// loopbackContenders starts a net/http server answering {} and returns the
// contenders, each on an http.Transport of its own, connections warmed.
func loopbackContenders(b *testing.B) []loopbackContender {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	b.Cleanup(srv.Close)
	lim, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["127.0.0.1"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	base := func() *http.Transport {
		return &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	}
	url := srv.URL + "/users/me/profile/settings"
	// A deadline before the per-attempt timeout (20 s), as in
	// BenchmarkNoRetry: the transport then arms no timer of its own.
	deadline, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	b.Cleanup(cancel)
	fgrl := func() http.RoundTripper {
		return &transport.Transport{Base: base(), Limits: lim, TitleID: "1234567890", AllowInsecure: true}
	}
	retry := retryablehttp.NewClient()
	retry.HTTPClient = &http.Client{Transport: base()}
	retry.Logger = nil
	cs := []loopbackContender{
		{"base", base(), requests(context.Background(), url)},
		{"fgrl", fgrl(), requests(context.Background(), url)},
		{"fgrl-deadline", fgrl(), requests(deadline, url)},
		{"retryablehttp", &retryablehttp.RoundTripper{Client: retry}, requests(context.Background(), url)},
	}
	for _, c := range cs {
		for _, r := range c.reqs[:4] { // warm the connections
			roundTrip(b, c.rt, r)
		}
	}
	return cs
}

// roundTrip sends r and reads and closes the answer.
func roundTrip(b *testing.B, rt http.RoundTripper, r *http.Request) {
	resp, err := rt.RoundTrip(r)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkLoopback is BenchmarkNoRetry over real loopback HTTP: a net/http
// server answering {} and an http.Transport as every contender's base. It
// reports the goroutines created per call (the server's one per connection
// is amortised over keep-alive; the rest is per request).
func BenchmarkLoopback(b *testing.B) {
	for _, c := range loopbackContenders(b) {
		b.Run(c.name, func(b *testing.B) {
			g0 := goroutinesCreated()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				roundTrip(b, c.rt, c.reqs[i%len(c.reqs)])
			}
			b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
		})
	}
}

// pairBlock is how many calls one contender makes in a row in
// BenchmarkLoopbackPaired before the next one's turn.
const pairBlock = 50

// BenchmarkLoopbackPaired measures the loopback overheads with the
// contenders taking turns in blocks of pairBlock calls, in a rotating order,
// within one benchmark: the round trip itself drifts by several µs between
// runs seconds apart (more than any contender's overhead, which made
// BenchmarkLoopback's overhead ratios noise), and taking turns puts that
// drift on every contender alike. An op is one block of each contender. It
// reports each contender's wall time per call and the overhead ratios
// against go-retryablehttp's, then the same in CPU time: the process's, client
// and server together, while the contender's block ran (the server's share
// is the same for every contender, so the differences are the clients').
func BenchmarkLoopbackPaired(b *testing.B) {
	cs := loopbackContenders(b)
	wall := make([]int64, len(cs))
	cpu := make([]int64, len(cs))
	cpuOK := true
	calls := 0
	for i := 0; b.Loop(); i++ {
		for k := range cs {
			at := (i + k) % len(cs)
			start := time.Now()
			cpu0, ok0 := processCPU()
			for j := range pairBlock {
				roundTrip(b, cs[at].rt, cs[at].reqs[(calls+j)%len(cs[at].reqs)])
			}
			wall[at] += time.Since(start).Nanoseconds()
			cpu1, ok1 := processCPU()
			cpu[at] += cpu1 - cpu0
			cpuOK = cpuOK && ok0 && ok1
		}
		calls += pairBlock
	}
	reportPaired(b, cs, wall, calls, "ns/call")
	if cpuOK {
		reportPaired(b, cs, cpu, calls, "cpu-ns/call")
	}
}

// reportPaired reports each contender's total per call in unit, and the
// overhead ratios against go-retryablehttp's (contender 3 against 0).
func reportPaired(b *testing.B, cs []loopbackContender, total []int64, calls int, unit string) {
	per := make([]float64, len(cs))
	for k, c := range cs {
		per[k] = float64(total[k]) / float64(calls)
		b.ReportMetric(per[k], c.name+"-"+unit)
	}
	over := func(k int) float64 { return per[k] - per[0] }
	kind := strings.TrimSuffix(unit, "ns/call")
	b.ReportMetric(over(1)/over(3), "fgrl/retryablehttp-"+kind+"overhead")
	b.ReportMetric(over(2)/over(3), "fgrl-deadline/retryablehttp-"+kind+"overhead")
	// The target: each fgrl contender's overhead as a share of one bare call.
	b.ReportMetric(100*over(1)/per[0], "fgrl-"+kind+"overhead-%")
	b.ReportMetric(100*over(2)/per[0], "fgrl-deadline-"+kind+"overhead-%")
	b.ReportMetric(100*over(3)/per[0], "retryablehttp-"+kind+"overhead-%")
}
