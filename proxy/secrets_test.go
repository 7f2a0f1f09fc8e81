package proxy

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport/transportprom"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers (a logger).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNoSecretAnywhere: the tokens, a Signature and a query's access_token
// of calls served, refused locally, failed upstream (whose error quotes
// the URL) and misdirected reach none of the proxy's log, its status, its
// live page, /metrics, or the bodies it writes.
func TestNoSecretAnywhere(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	secrets := []string{"SIGNATURE-SECRET", "QUERY-SECRET"}
	for _, x := range []string{xuid1, xuid2} {
		_, tok, _ := strings.Cut(mock.Token(x, title), ";")
		secrets = append(secrets, tok)
	}
	var seen []string // every body the proxy answered with
	check := func(where, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q", where, s)
			}
		}
	}
	edit := func(c *Config) {
		c.Logger = logger
		c.Transport.Logger = logger
		reg := prometheus.NewRegistry()
		reg.MustRegister(transportprom.Collector(c.Transport))
		c.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	f := serve(t, edit)
	failing := serve(t, func(c *Config) {
		c.Transport.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection refused")}
		})
		c.Transport.RetryWindow = -1
		edit(c)
	})
	q := "&access_token=QUERY-SECRET"
	for _, rs := range [][]*http.Response{
		burst(t, f.client, 12, profileURL+q, xuid1, HeaderFailFast, "true", "Signature", "SIGNATURE-SECRET"),
		burst(t, failing.client, 2, profileURL+q, xuid2, "Signature", "SIGNATURE-SECRET"),
	} {
		got, _ := statuses(rs)
		if got[200]+got[429]+got[502] != len(rs) {
			t.Errorf("statuses %v", got)
		}
	}
	_, body := rawRequest(t, f.addr, "GET https://profile.xboxlive.com/x?access_token=QUERY-SECRET HTTP/1.1\r\nHost: social.xboxlive.com\r\n"+
		"Authorization: "+mock.Token(xuid1, title)+"\r\nFgrl-Fail-Fast: true\r\nConnection: close\r\n\r\n")
	seen = append(seen, body)
	resp, body := rawRequest(t, failing.addr, "GET "+profileURL+q+" HTTP/1.1\r\nHost: x\r\nAuthorization: "+mock.Token(xuid2, title)+"\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("a failed call: %d, want 502", resp.StatusCode)
	}
	seen = append(seen, body)
	for _, p := range []string{"/_fgrl/api/status", "/_fgrl/", "/metrics"} {
		for _, fx := range []*fixture{f, failing} {
			resp, body := rawRequest(t, fx.addr, "GET "+p+" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %d", p, resp.StatusCode)
			}
			check(p, body)
		}
	}
	for _, b := range seen {
		check("an answer's body", b)
	}
	check("the log", logs.String())
	if !strings.Contains(logs.String(), "outcome=refused_locally") || !strings.Contains(logs.String(), "outcome=failed") {
		t.Errorf("the log has no refusal or failure line:\n%s", logs.String())
	}
}
