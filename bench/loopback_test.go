package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
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

// BenchmarkLoopback is BenchmarkNoRetry over real loopback HTTP: a net/http
// server answering {} and an http.Transport as every contender's base. It
// reports the goroutines created per call (the server's one per connection
// is amortised over keep-alive; the rest is per request).
func BenchmarkLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	lim, err := limits.Parse([]byte(`{"rules": [{"service": "profile", "hosts": ["127.0.0.1"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	base := func() *http.Transport {
		return &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	}
	reqs := func(ctx context.Context) []*http.Request {
		out := make([]*http.Request, benchUsers)
		for i := range out {
			out[i], _ = http.NewRequestWithContext(ctx, "GET", srv.URL+"/users/me/profile/settings", nil)
			out[i].Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000000+i), "1234567890"))
		}
		return out
	}
	deadline, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, c := range []struct {
		name string
		rt   func() http.RoundTripper
		ctx  context.Context
	}{
		{"base", func() http.RoundTripper { return base() }, context.Background()},
		{"fgrl", func() http.RoundTripper {
			return &transport.Transport{Base: base(), Limits: lim, TitleID: "1234567890", AllowInsecure: true}
		}, context.Background()},
		{"fgrl-deadline", func() http.RoundTripper {
			return &transport.Transport{Base: base(), Limits: lim, TitleID: "1234567890", AllowInsecure: true}
		}, deadline},
		{"retryablehttp", func() http.RoundTripper {
			c := retryablehttp.NewClient()
			c.HTTPClient = &http.Client{Transport: base()}
			c.Logger = nil
			return &retryablehttp.RoundTripper{Client: c}
		}, context.Background()},
	} {
		b.Run(c.name, func(b *testing.B) {
			rt, rs := c.rt(), reqs(c.ctx)
			for _, r := range rs[:4] { // warm the connections
				resp, err := rt.RoundTrip(r)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			g0 := goroutinesCreated()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				resp, err := rt.RoundTrip(rs[i%len(rs)])
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
		})
	}
}
