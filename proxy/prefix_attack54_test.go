package proxy

// attack54: "the proxy strips its own prefix from the service's headers and
// trailers" (HeaderRefused: "An answer the service gave never carries it,
// whatever the service sent"), tried by other ways.

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/transport"
)

// attack54Serve is attack49Serve with the transport's settings edited.
func attack54Serve(t *testing.T, h http.Handler, edit func(*transport.Transport)) *http.Client {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	base := attack49ToUpstream{addr: up.Listener.Addr().String(), tr: &http.Transport{}}
	t.Cleanup(base.tr.CloseIdleConnections)
	tr := &transport.Transport{Base: base, TitleID: title}
	if edit != nil {
		edit(tr)
	}
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := ca.TLSConfig(Hosts(limits.Default()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Transport: tr, TLS: tlsConf, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	pu, _ := url.Parse("http://" + ln.Addr().String())
	ctr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, ForceAttemptHTTP2: true}
	t.Cleanup(ctr.CloseIdleConnections)
	return &http.Client{Transport: ctr, Timeout: 20 * time.Second}
}

// attack54Get sends a profile GET as xuid1 (query q) and returns the answer,
// its body read, and the headers of any 1xx answer before it.
func attack54Get(t *testing.T, c *http.Client, q string) (*http.Response, []http.Header) {
	t.Helper()
	var mu sync.Mutex
	var infos []http.Header
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			mu.Lock()
			infos = append(infos, http.Header(h).Clone())
			mu.Unlock()
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", profileURL+"&t="+q, nil)
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	req.Header.Set("x-xbl-contract-version", "3")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	return resp, infos
}

// attack54Carries reports the Fgrl- names h holds.
func attack54Carries(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "fgrl-") {
			out = append(out, k)
		}
	}
	return out
}

// TestAttack54ServiceEarlyHintsCarryHeaderRefused: the service answers with a
// 103 Early Hints carrying "Fgrl-Refused: local" (and a Link), then its
// 200. The ReverseProxy forwards 1xx answers itself (its
// ClientTrace.Got1xxResponse writes their header to the application)
// before the Transport's RoundTrip returns, so roundTripper's stripPolicy
// never sees them: the application is told "Fgrl-Refused: local" by the
// service, on the way to an answer the service gave.
//
// BREAK. Promise: HeaderRefused godoc "An answer the service gave never
// carries it, whatever the service sent"; PolicyPrefix godoc "It strips
// the service's answers of such headers too (and of such trailers): one
// on an answer is the proxy's own".
func TestAttack54ServiceEarlyHintsCarryHeaderRefused(t *testing.T) {
	c := attack54Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.Header().Set(HeaderRefused, "local")
		w.Header().Set("Fgrl-Max-Wait", "30s")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del(HeaderRefused)
		w.Header().Del("Fgrl-Max-Wait")
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"profileUsers":[]}`)
	}), nil)
	resp, infos := attack54Get(t, c, "103")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if len(infos) == 0 {
		t.Skip("no 1xx answer reached the application: nothing to judge")
	}
	for _, h := range infos {
		if names := attack54Carries(h); len(names) > 0 {
			t.Errorf("a 1xx answer of the service reached the application with %v (%q=%q)", names, HeaderRefused, h.Get(HeaderRefused))
		}
	}
	if names := attack54Carries(resp.Header); len(names) > 0 {
		t.Errorf("the final answer carries %v", names)
	}
}

// held: HeaderRefused godoc "An answer the service gave never carries it,
// whatever the service sent"; PolicyPrefix godoc "(and of such
// trailers)". The service writes the prefix's names raw, in lower case
// and upper case, as a header, as a declared trailer and as an
// undeclared one, on a 200 and a 429; the transport with Raw429 false
// (the 429 becomes the proxy's refusal, not local) and true (the 429
// passed on); with CoalesceReads and a read cache, the second call
// answered from memory. No answer the application reads carries a Fgrl-
// name.
func TestAttack54ServicePrefixVariantsStripped(t *testing.T) {
	var sent atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		q := r.URL.Query().Get("t")
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		status := "200 OK"
		if strings.HasPrefix(q, "429") {
			status = "429 Too Many Requests\r\nRetry-After: 1"
		}
		rw.WriteString("HTTP/1.1 " + status + "\r\nfgrl-refused: local\r\nFGRL-REFUSED: local\r\nfGrL-rule: x\r\n" +
			"Cache-Control: max-age=60\r\nDate: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n" +
			"Content-Type: application/json\r\nTrailer: fgrl-refused\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
			"13\r\n{\"profileUsers\":[]}\r\n0\r\nfgrl-refused: local\r\nFGRL-OTHER: local\r\n\r\n")
		rw.Flush()
	})
	for _, tc := range []struct {
		name string
		edit func(*transport.Transport)
		q    []string
	}{
		{"raw429 false", func(tr *transport.Transport) { tr.DisableBudget = true }, []string{"200", "429"}},
		{"raw429 true", func(tr *transport.Transport) { tr.DisableBudget = true; tr.Raw429 = true }, []string{"200", "429"}},
		{"coalesced and cached", func(tr *transport.Transport) {
			tr.DisableBudget = true
			tr.CoalesceReads, tr.ReadCacheTTL = true, 10*time.Second
		}, []string{"c", "c", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := attack54Serve(t, h, tc.edit)
			before := sent.Load()
			for _, q := range tc.q {
				resp, infos := attack54Get(t, c, q)
				if names := attack54Carries(resp.Header); len(names) > 0 {
					t.Errorf("%s: the answer (%d) carries %v", q, resp.StatusCode, names)
				}
				if names := attack54Carries(resp.Trailer); len(names) > 0 {
					t.Errorf("%s: the answer's trailers carry %v", q, names)
				}
				for _, ih := range infos {
					if names := attack54Carries(ih); len(names) > 0 {
						t.Errorf("%s: a 1xx carries %v", q, names)
					}
				}
			}
			if tc.name == "coalesced and cached" && sent.Load()-before != 1 {
				t.Logf("the service was sent %d calls for 3 reads (not all from the cache)", sent.Load()-before)
			}
		})
	}
}

// held: HeaderRefused godoc "HeaderRefused is set, to "local", on an answer
// the proxy wrote itself for a call the transport refused without sending
// it": stripping the service's prefix left the proxy's own mark on its
// local refusals (spendBudget fails the test when no 429 carries it).
func TestAttack54LocalRefusalKeepsHeaderRefused(t *testing.T) {
	f := serve(t, nil)
	spendBudget(t, f, xuid1)
	resp, _, err := get(t, f.client, context.Background(), profileURL, xuid1, HeaderFailFast, "true")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get(HeaderRefused) != "local" {
		t.Errorf("after the budget was spent: %d %s=%q, want 429 local", resp.StatusCode, HeaderRefused, resp.Header.Get(HeaderRefused))
	}
}
