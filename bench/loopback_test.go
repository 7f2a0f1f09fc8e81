package bench

import (
	"context"
	"flag"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
	"golang.org/x/time/rate"
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
// requests it sends; cancel gives each request a cancellable context of its
// own, as a caller without a deadline must to end a call (XSAPI's attempt
// timeout is one), deadline a deadline of its own, 15 s ahead (before the
// transport's 20 s attempt timeout, which then arms no timer).
type loopbackContender struct {
	name     string
	rt       http.RoundTripper
	reqs     []*http.Request
	cancel   bool
	deadline bool
	timer    bool
	allocs   bool // four more heap objects a call (base-alloc4: see allocSink)
	extra    bool // runs only when -contenders names it
}

// contendersFlag picks the contenders of the loopback benchmarks by name
// (go test ... -args -contenders base-deadline,fgrl-deadline): fewer
// contenders taking turns leave each other less of their memory to
// evict. Empty: every contender but the extra ones.
var contendersFlag = flag.String("contenders", "", "the loopback contenders to run, by name, comma-separated (default: all but fgrl-nobudget, base-cancel-again and base-alloc4)")

// picked reports whether the contender named name runs.
func picked(name string, extra bool) bool {
	if *contendersFlag == "" {
		return !extra
	}
	return slices.Contains(strings.Split(*contendersFlag, ","), name)
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
	fgrl := func() http.RoundTripper {
		return &transport.Transport{Base: base(), Limits: lim, TitleID: "1234567890", AllowInsecure: true}
	}
	retry := retryablehttp.NewClient()
	retry.HTTPClient = &http.Client{Transport: base()}
	retry.Logger = nil
	cs := []loopbackContender{
		{name: "base", rt: base(), reqs: requests(context.Background(), url)},
		{name: "base-cancel", rt: base(), reqs: requests(context.Background(), url), cancel: true},
		// base-cancel again, on a transport of its own: the two differ only
		// by the run's noise, which this measures.
		{name: "base-cancel-again", rt: base(), reqs: requests(context.Background(), url), cancel: true, extra: true},
		{name: "base-deadline", rt: base(), reqs: requests(context.Background(), url), deadline: true},
		{name: "base-timer", rt: base(), reqs: requests(context.Background(), url), cancel: true, timer: true},
		{name: "base-alloc4", rt: base(), reqs: requests(context.Background(), url), cancel: true, allocs: true, extra: true},
		{name: "fgrl", rt: fgrl(), reqs: requests(context.Background(), url)},
		{name: "fgrl-deadline", rt: fgrl(), reqs: requests(context.Background(), url), deadline: true},
		// fgrl-deadline without its budget: what the budget's part is.
		{name: "fgrl-nobudget", rt: &transport.Transport{Base: base(), Limits: lim, TitleID: "1234567890", AllowInsecure: true, DisableBudget: true},
			reqs: requests(context.Background(), url), deadline: true, extra: true},
		{name: "retryablehttp", rt: &retryablehttp.RoundTripper{Client: retry}, reqs: requests(context.Background(), url)},
		{name: "handbuilt", rt: handBuilt(base()), reqs: requests(context.Background(), url)},
		{name: "handbuilt-deadline", rt: handBuilt(base()), reqs: requests(context.Background(), url), deadline: true},
	}
	cs = slices.DeleteFunc(cs, func(c loopbackContender) bool { return !picked(c.name, c.extra) })
	for _, c := range cs {
		for _, r := range c.reqs[:4] { // warm the connections
			c.roundTrip(b, r)
		}
	}
	return cs
}

// roundTrip sends r and reads and closes the answer.
func (c *loopbackContender) roundTrip(b *testing.B, r *http.Request) {
	switch {
	case c.cancel:
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		if c.timer {
			tm := time.AfterFunc(20*time.Second, cancel)
			defer tm.Stop()
		}
		if c.allocs {
			allocSink[0] = &obj48{}
			allocSink[1] = &obj16{}
			allocSink[2] = &obj96{}
			allocSink[3] = &obj24{}
		}
		r = r.WithContext(ctx)
	case c.deadline:
		ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
		defer cancel()
		r = r.WithContext(ctx)
	}
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// handBuilt is what a user would build instead of fgrl with the same
// attempt timeout: go-retryablehttp, its client's timeout XSAPI's 20 s,
// around a golang.org/x/time/rate limiter per user (by the request's
// Authorization) at limits no run reaches, over base.
func handBuilt(base http.RoundTripper) http.RoundTripper {
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: &perUserLimiter{base: base, users: map[string]*rate.Limiter{}}, Timeout: 20 * time.Second}
	c.Logger = nil
	return &retryablehttp.RoundTripper{Client: c}
}

// perUserLimiter waits for the request's user's token bucket (100,000 a
// burst, refilled at 100,000 per 15 s), then sends it through base.
type perUserLimiter struct {
	base  http.RoundTripper
	mu    sync.Mutex
	users map[string]*rate.Limiter
}

func (p *perUserLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	user := req.Header.Get("Authorization")
	p.mu.Lock()
	l := p.users[user]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(100000.0/15), 100000)
		p.users[user] = l
	}
	p.mu.Unlock()
	if err := l.Wait(req.Context()); err != nil {
		return nil, err
	}
	return p.base.RoundTrip(req)
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
				c.roundTrip(b, c.reqs[i%len(c.reqs)])
			}
			b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
		})
	}
}

// blockFlag is how many calls one contender makes in a row in
// BenchmarkLoopbackPaired before the next one's turn.
var blockFlag = flag.Int("block", 50, "the calls each loopback contender makes in a row before the next one's turn")

// BenchmarkLoopbackPaired measures the loopback overheads with the
// contenders taking turns in blocks of -block calls (50), in a shuffled order,
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
	wall, cpu, cpuOK, calls := takeTurns(b, cs)
	reportPaired(b, cs, wall, calls, "ns/call")
	if cpuOK {
		reportPaired(b, cs, cpu, calls, "cpu-ns/call")
	}
}

// takeTurns runs cs in turns of -block calls each, in a new order each
// round, until b's loop ends, and returns each one's wall and process CPU
// time in all (cpuOK: the process's CPU time could be read throughout) and
// the calls each made. The order is shuffled (from a fixed seed, so a run
// can be repeated), not rotated: a rotation keeps each contender behind the
// same neighbour, whose leftovers (its garbage, its idle connections'
// wake-ups) then land on the one contender every round.
func takeTurns(b *testing.B, cs []loopbackContender) (wall, cpu []int64, cpuOK bool, calls int) {
	pairBlock := max(1, *blockFlag)
	wall, cpu, cpuOK = make([]int64, len(cs)), make([]int64, len(cs)), true
	rng := rand.New(rand.NewPCG(46, 1))
	order := make([]int, len(cs))
	for k := range order {
		order[k] = k
	}
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, at := range order {
			start := time.Now()
			cpu0, ok0 := processCPU()
			for j := range pairBlock {
				cs[at].roundTrip(b, cs[at].reqs[(calls+j)%len(cs[at].reqs)])
			}
			wall[at] += time.Since(start).Nanoseconds()
			cpu1, ok1 := processCPU()
			cpu[at] += cpu1 - cpu0
			cpuOK = cpuOK && ok0 && ok1
		}
		calls += pairBlock
	}
	return wall, cpu, cpuOK, calls
}

// reportPaired reports each contender's total per call in unit, and the
// overheads: fgrl's and the others' as a share of a bare call with the same
// kind of context (a per-request cancellable one without a deadline, the
// caller's deadline with one), as a share of a bare call without either
// (the earlier target's figure), and fgrl's cost against the hand-built
// combination's with the same timeout.
func reportPaired(b *testing.B, cs []loopbackContender, total []int64, calls int, unit string) {
	per := map[string]float64{}
	for k, c := range cs {
		per[c.name] = float64(total[k]) / float64(calls)
		b.ReportMetric(per[c.name], c.name+"-"+unit)
	}
	kind := strings.TrimSuffix(unit, "ns/call")
	over := func(a, base string) float64 { return per[a] - per[base] }
	// report reports v unless a contender it compares did not run.
	report := func(v float64, name string, of ...string) {
		for _, c := range of {
			if _, ok := per[c]; !ok {
				return
			}
		}
		b.ReportMetric(v, name)
	}
	report(over("fgrl", "base")/over("retryablehttp", "base"), "fgrl/retryablehttp-"+kind+"overhead", "fgrl", "base", "retryablehttp")
	report(over("fgrl-deadline", "base")/over("retryablehttp", "base"), "fgrl-deadline/retryablehttp-"+kind+"overhead", "fgrl-deadline", "base", "retryablehttp")
	for _, c := range []string{"fgrl", "fgrl-deadline", "retryablehttp"} {
		report(100*over(c, "base")/per["base"], c+"-"+kind+"overhead-%", c, "base")
	}
	// The targets: against a bare call with the same kind of context, and
	// against the hand-built combination with the same timeout.
	vs := func(a, base string) { report(100*over(a, base)/per[base], a+"-vs-"+base+"-"+kind+"%", a, base) }
	vs("fgrl", "base-cancel")
	vs("base-timer", "base-cancel")
	vs("base-alloc4", "base-cancel")
	vs("base-cancel-again", "base-cancel")
	vs("fgrl-deadline", "base-deadline")
	vs("fgrl-nobudget", "base-deadline")
	vs("handbuilt", "base-cancel")
	vs("handbuilt-deadline", "base-deadline")
	report(per["fgrl"]/per["handbuilt"], "fgrl/handbuilt-"+kind+"x", "fgrl", "handbuilt")
	report(per["fgrl-deadline"]/per["handbuilt-deadline"], "fgrl-deadline/handbuilt-deadline-"+kind+"x", "fgrl-deadline", "handbuilt-deadline")
}

// The four objects base-alloc4 allocates a call, about the sizes of the ones
// the transport's attempt adds to a call without a deadline (the attempt, its
// timer's function, the timer, the body's wrapper; BenchmarkNoRetry/fgrl's 11
// allocations against the bare call's 4, of which the cancellable context
// and the request's copy are base-cancel's too), made of pointers as those
// are. Stored in allocSink so that they are made on the heap, and garbage at
// the next call: whether fresh allocations, each a line of memory the caches
// do not hold, are what a call over loopback pays for (BENCHMARKS.md §1b).
type (
	obj48 [6]*int
	obj16 [2]*int
	obj96 [12]*int
	obj24 [3]*int
)

var allocSink [4]any
