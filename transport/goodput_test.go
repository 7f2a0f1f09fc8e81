package transport

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
)

// goodput is what one client achieved over a run.
type goodput struct {
	delivered, server429s int
}

// demand calls profile about 10 times a second for d, each call in its own
// goroutine as a busy game backend would, and counts what the service
// served within d (calls still waiting for a slot when the demand stops
// are served later and not counted) and the 429s it sent.
func demand(t *testing.T, rt http.RoundTripper, server *statusCounter, d time.Duration) goodput {
	var wg sync.WaitGroup
	start := time.Now()
	server.until = start.Add(d)
	for time.Since(start) < d {
		wg.Go(func() { get(t, rt, context.Background(), profileURL, xuid1) })
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	return goodput{delivered: server.count(200), server429s: server.count(429)}
}

// retryAfterClient is what generic retry libraries (go-retryablehttp's
// default policy) do: honour Retry-After and retry a 429 up to 4 times.
type retryAfterClient struct{ base http.RoundTripper }

func (c retryAfterClient) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || attempt == 4 {
			return resp, err
		}
		ra, _ := ratelimit.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), MaxRetryAfter)
		discard(resp)
		time.Sleep(ra)
	}
}

// TestGoodput: 30 virtual minutes of a caller wanting 10 calls/s of profile
// (burst 10, sustain 30): FGRL allows 30 per 300 s, 180 in all.
func TestGoodput(t *testing.T) {
	const run = 30 * time.Minute
	allowance := 30 * int(run/(300*time.Second))
	clients := []struct {
		name string
		rt   func(base http.RoundTripper) http.RoundTripper
	}{
		{"plain client", func(b http.RoundTripper) http.RoundTripper { return b }},
		{"honour Retry-After and retry", func(b http.RoundTripper) http.RoundTripper { return retryAfterClient{b} }},
		{"fgrl transport", func(b http.RoundTripper) http.RoundTripper { return &Transport{Base: b, TitleID: title} }},
	}
	results := make([]goodput, len(clients))
	for i, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server := &statusCounter{base: mock.NewHandler()}
				results[i] = demand(t, c.rt(server), server, run)
			})
		})
		r := results[i]
		t.Logf("%-30s delivered %3d (%5.1f%% of the %d FGRL allows), server 429s %5d",
			c.name, r.delivered, 100*float64(r.delivered)/float64(allowance), allowance, r.server429s)
	}
	ours := results[2]
	if ours.server429s != 0 || float64(ours.delivered) < 0.95*float64(allowance) {
		t.Errorf("fgrl transport: %+v, want 0 server 429s and at least 95%% of %d", ours, allowance)
	}
}
