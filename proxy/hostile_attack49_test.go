package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/transport"
)

// attack49ToUpstream is a transport Base that sends every request, whatever
// its https://<xbox host>, to a plain-HTTP httptest server on loopback
// (the hostile "service"), keeping the Host header.
type attack49ToUpstream struct {
	addr string
	tr   *http.Transport
}

func (a attack49ToUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Host = req.URL.Host
	u := *req.URL
	u.Scheme, u.Host = "http", a.addr
	r.URL = &u
	return a.tr.RoundTrip(r)
}

type attack49Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *attack49Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *attack49Log) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// attack49Serve starts a proxy whose transport calls the hostile upstream h,
// logging into the returned buffer; it returns the proxy's address, a
// client through it (CONNECT) and the log.
func attack49Serve(t *testing.T, h http.Handler, raw429 bool) (string, *http.Client, *attack49Log) {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	base := attack49ToUpstream{addr: up.Listener.Addr().String(), tr: &http.Transport{}}
	t.Cleanup(base.tr.CloseIdleConnections)
	tr := &transport.Transport{Base: base, TitleID: title, Raw429: raw429}
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := ca.TLSConfig(Hosts(limits.Default()))
	if err != nil {
		t.Fatal(err)
	}
	lg := &attack49Log{}
	logger := slog.New(slog.NewTextHandler(lg, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tr.Logger = logger
	srv, err := New(Config{Transport: tr, TLS: tlsConf, Logger: logger})
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
	ctr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	t.Cleanup(ctr.CloseIdleConnections)
	return ln.Addr().String(), &http.Client{Transport: ctr, Timeout: 20 * time.Second}, lg
}

// BREAK: HeaderRefused's godoc: "HeaderRefused is set, to "local", on an
// answer the proxy wrote itself for a call the transport refused without
// sending it (a *transport.ThrottleError with Local): the service's budget
// was not spent." and the package doc / README: "answered 429 with
// Retry-After ... plus HeaderRefused, so the application's own 429
// handling works and the service's budget is not spent".
// A hostile (or merely buggy) service can put "Fgrl-Refused: local" on
// its own answers: the proxy passes response headers named with its own
// PolicyPrefix through, so an application is told that an answer the
// service gave (a 429 the service counted, a 200 it served) was the
// proxy's own local refusal and that nothing was sent.
func TestAttack49ServiceSpoofsHeaderRefused(t *testing.T) {
	var hits int
	var mu sync.Mutex
	_, c, _ := attack49Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set(HeaderRefused, "local")
		switch r.URL.Query().Get("t") {
		case "trailer": // announced, and one not announced (TrailerPrefix)
			w.Header().Set("Trailer", HeaderRefused)
			io.WriteString(w, `{"profileUsers":[]}`)
			w.Header().Set(HeaderRefused, "local")
			w.Header().Set(http.TrailerPrefix+"Fgrl-Other", "x")
			return
		}
		if r.URL.Query().Get("t") == "429" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"limitType":"Rate"}`)
			return
		}
		io.WriteString(w, `{"profileUsers":[]}`)
	}), true)
	for _, q := range []string{"200", "429", "trailer"} {
		resp, _, err := get(t, c, context.Background(), "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&t="+q, xuid1, HeaderNoRetry, "true")
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := hits
		mu.Unlock()
		if got := resp.Header.Get(HeaderRefused); got != "" {
			t.Errorf("the service's own %d answer (the service was called: %d requests) reached the application with %s: %q, "+
				"the mark of an answer the proxy wrote itself without sending the call", resp.StatusCode, n, HeaderRefused, got)
		}
		for name := range resp.Trailer {
			if strings.HasPrefix(name, PolicyPrefix) {
				t.Errorf("the service's own %d answer reached the application with the trailer %s: %q", resp.StatusCode, name, resp.Trailer[name])
			}
		}
	}
}

// held: the package doc: "A plain HTTP request in absolute form (GET
// https://profile.xboxlive.com/... ) is served the same way" and Config.Logger:
// "never a token nor the query". Userinfo in an absolute-form target is
// neither sent to the service (as Basic credentials net/http would make
// of it) nor logged, nor echoed in the proxy's refusals.
func TestAttack49AbsoluteFormUserinfoGoesNowhere(t *testing.T) {
	const secret = "UsErInFoSeCrEt123456"
	var mu sync.Mutex
	var seen []string
	addr, _, lg := attack49Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %v", r.Host, r.RequestURI, r.Header))
		mu.Unlock()
		io.WriteString(w, `{"profileUsers":[]}`)
	}), true)
	for _, target := range []string{
		"https://fgrl:" + secret + "@profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
		"https://fgrl:" + secret + "@evil.example/users/me",
		"http://fgrl:" + secret + "@profile.xboxlive.com/users/me",
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: %s\r\nConnection: close\r\n\r\n", target, mock.Token(xuid1, title))
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		if strings.Contains(string(b), secret) {
			t.Errorf("%s: the answer (%d) echoes the userinfo: %s", target, resp.StatusCode, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 {
		t.Errorf("the service saw %d requests, want 1 (the Xbox host over https): %q", len(seen), seen)
	}
	for _, s := range seen {
		if strings.Contains(s, "Basic") || strings.Contains(s, secret) {
			t.Errorf("the service saw the userinfo: %s", s)
		}
	}
	if strings.Contains(lg.String(), secret) {
		t.Errorf("the log holds the userinfo:\n%s", lg.String())
	}
}
