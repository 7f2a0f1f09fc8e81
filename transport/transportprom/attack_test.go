package transportprom_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
	"github.com/xblgo/fgrl/transport/transportprom"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestHostileHostScope: two users' 429s from a host the limits data
// lacks, whose name holds an escape code and an invalid byte (a Base
// other than net/http's sends it), confirm a limit for the scope "host:"
// and the host. A scrape makes that scope a label: every label value a
// scrape shows is escaped (no control character reaches a terminal that
// reads /metrics), and Collect never panics.
func TestHostileHostScope(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Request: req,
			Body: io.NopCloser(strings.NewReader(`{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`))}, nil
	})
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1}
	for _, xuid := range []string{"2533274791234567", "2533274797654321"} {
		req, _ := http.NewRequest("GET", "https://example.com/x", nil)
		req.Host = "evil\xff\x1b[2J.example.com"
		req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	if len(tr.LearnedLimits()) == 0 {
		t.Fatal("nothing learned")
	}
	ch := make(chan prometheus.Metric, 100)
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Collect panicked: %v", r)
			}
		}()
		transportprom.Collector(tr).Collect(ch)
	}()
	close(ch)
	reg := prometheus.NewRegistry()
	reg.MustRegister(transportprom.Collector(tr))
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v := l.GetValue(); !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
					t.Errorf("%s: label %s=%q is not escaped", f.GetName(), l.GetName(), v)
				}
			}
		}
	}
}
