package fgrlotel_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// downStore is a shared budget store that is down.
type downStore struct{}

var errDown = errors.New("store down")

func (downStore) Reserve(context.Context, throttle.Key, throttle.Limit, time.Time, time.Duration) (throttle.Admission, error) {
	return throttle.Admission{}, errDown
}
func (downStore) Release(context.Context, throttle.Key, throttle.Limit, int64) error {
	return errDown
}
func (downStore) Block(context.Context, throttle.Key, time.Time, time.Time) error {
	return errDown
}
func (downStore) Sync(context.Context, throttle.Key, throttle.Limit, time.Time, throttle.Period, int, time.Duration) error {
	return errDown
}
func (downStore) Snapshot(context.Context, throttle.Key, throttle.Limit, time.Time) (throttle.Snapshot, error) {
	return throttle.Snapshot{}, errDown
}

// TestHostScopesBounded: fgrl.scope is "the limits rule", and an
// Event's Scope is "" for a host without a rule: the series of a transport
// are bounded by its limits data. 200 hosts the data lacks, each answering
// 429 with a body (a limit is learned for the host), twice, with
// the shared budget store down: the store's failures and fallbacks were
// reported with the scope "host:" and the host, escape codes and all, one
// series per host, for ever.
func TestHostScopesBounded(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Request: req,
			Body: io.NopCloser(strings.NewReader(`{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`))}, nil
	})
	reader := sdkmetric.NewManualReader()
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1, Budget: downStore{}}
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		for range 2 {
			req, _ := http.NewRequest("GET", "https://example.com/x", nil)
			req.Host = "h" + strconv.Itoa(i) + "\x1b[2J.example.com"
			req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	series, bad := 0, 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					series++
					if v, ok := p.Attributes.Value("fgrl.scope"); ok && (strings.HasPrefix(v.AsString(), "host:") || strings.ContainsFunc(v.AsString(), unicode.IsControl)) {
						if bad++; bad <= 3 {
							t.Errorf("%s: fgrl.scope %q", m.Name, v.AsString())
						}
					}
				}
			case metricdata.Histogram[float64]:
				series += len(d.DataPoints)
			}
		}
	}
	if bad > 0 || series > 20 {
		t.Errorf("%d series after calls to 200 hosts without a rule; %d name a host", series, bad)
	}
}

// TestExactUnderConcurrency: 4 users' calls on 4 goroutines each
// against a service applying a burst of 6 where the table says 10 (429s,
// retries, learned limits, waits, local refusals), while another
// goroutine collects the metrics and reads Stats and LearnedLimits (run
// with -race). The metrics then match Stats and what the service saw,
// each kind of event counted once.
func TestExactUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		served, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := mock.New(mock.Config{Limits: served})
		var sent, got429 atomic.Int64
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			sent.Add(1)
			resp, err := h.RoundTrip(req)
			if err == nil && resp.StatusCode == 429 {
				got429.Add(1)
			}
			return resp, err
		})
		reader := sdkmetric.NewManualReader()
		tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: 20 * time.Second}
		if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var collectors sync.WaitGroup
		collectors.Go(func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(100 * time.Millisecond):
				}
				var rm metricdata.ResourceMetrics
				reader.Collect(context.Background(), &rm)
				tr.Stats()
				tr.LearnedLimits()
			}
		})
		var calls sync.WaitGroup
		for u := range 4 {
			for range 4 {
				calls.Go(func() {
					for range 15 {
						req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
						req.Header.Set("Authorization", mock.Token("253327479000000"+strconv.Itoa(u), "1234567890"))
						if resp, err := tr.RoundTrip(req); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				})
			}
		}
		calls.Wait()
		close(done)
		collectors.Wait()
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		total := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Sum[int64]:
					for _, p := range d.DataPoints {
						total[m.Name] += p.Value
						if v, ok := p.Attributes.Value("fgrl.outcome"); ok && v.AsString() == "429" {
							total["attempts 429"] += p.Value
						}
					}
				case metricdata.Histogram[float64]:
					for _, p := range d.DataPoints {
						total[m.Name] += int64(p.Count)
					}
				}
			}
		}
		s := tr.Stats()
		for _, c := range []struct {
			name      string
			got, want int64
		}{
			{"attempts (sent)", total["fgrl.transport.attempts"], sent.Load()},
			{"attempts (Stats)", total["fgrl.transport.attempts"], s.Attempts},
			{"429 attempts (served)", total["attempts 429"], got429.Load()},
			{"server_429s (served)", total["fgrl.transport.server_429s"], got429.Load()},
			{"server_429s (Stats)", total["fgrl.transport.server_429s"], s.Server429s},
			{"retries", total["fgrl.transport.retries"], s.Retries},
			{"waits", total["fgrl.transport.wait.duration"], s.Waits},
			{"local_refusals", total["fgrl.transport.local_refusals"], s.LocalRefusals},
			{"limits.learned", total["fgrl.transport.limits.learned"], s.LimitsLearned},
		} {
			if c.got != c.want {
				t.Errorf("%s: metric %d, want %d", c.name, c.got, c.want)
			}
		}
		t.Logf("stats %+v, sent %d, 429s %d", s, sent.Load(), got429.Load())
	})
}
