package transport

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// okBase answers 200 with a fixed body and reuses nothing from the request.
type okBase struct{}

func (okBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// benchUsers rotates callers so that no budget runs out during a run: 64
// users under limits of 100000 per window admit millions of calls.
func benchRequests(b *testing.B) []*http.Request {
	reqs := make([]*http.Request, 64)
	for i := range reqs {
		reqs[i], _ = http.NewRequest("GET", profileURL, nil)
		reqs[i].Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000000+i), title))
	}
	return reqs
}

func benchLimits(b *testing.B) *throttle.Limits {
	l, err := throttle.Parse([]byte(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func benchRT(b *testing.B, rt http.RoundTripper) {
	reqs := benchRequests(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		resp, err := rt.RoundTrip(reqs[i%len(reqs)])
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// BenchmarkNoRetry measures the transport's overhead on calls that succeed
// at once, side by side with the bare base: the difference is what the
// transport adds (rule match, Retry-After cache, budget, per-attempt
// timeout).
func BenchmarkNoRetry(b *testing.B) {
	b.Run("base", func(b *testing.B) { benchRT(b, okBase{}) })
	b.Run("transport", func(b *testing.B) { benchRT(b, &Transport{Base: okBase{}, Limits: benchLimits(b), TitleID: title}) })
	b.Run("transport-no-budget", func(b *testing.B) {
		benchRT(b, &Transport{Base: okBase{}, DisableBudget: true, TitleID: title})
	})
}

// stepClock is a virtual clock for benchmarks: every reading is step later
// than the previous one, so a run covers as much virtual time as it needs
// and no budget runs out. Nothing ever sleeps on it.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time { c.t = c.t.Add(c.step); return c.t }

func (c *stepClock) Sleep(context.Context, time.Duration) error { return nil }

func (c *stepClock) AfterFunc(time.Duration, func()) clock.Stopper { return noStop{} }

type noStop struct{}

func (noStop) Stop() bool { return true }

// BenchmarkUsers shows how the transport's cost grows with distinct users:
// each call is for the next of n users, with virtual time advancing so that
// every call is admitted (a user calls every 10 s of virtual time, under
// profile's 30 per 300 s), so with large n the budget holds n keys.
func BenchmarkUsers(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			tokens := make([]string, n)
			for i := range tokens {
				tokens[i] = "XBL3.0 x=" + strconv.Itoa(i) + ";t"
			}
			tr := &Transport{Base: okBase{}, TitleID: title}
			// Two clock readings a call: a user's calls are 10 s apart.
			ctx := clock.With(context.Background(), &stepClock{t: time.Unix(0, 0), step: 5 * time.Second / time.Duration(n)})
			req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
			req.Header.Set("Authorization", tokens[0])
			auth := req.Header["Authorization"]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				auth[0] = tokens[i%n]
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
