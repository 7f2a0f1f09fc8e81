package proxy

// atk (helper 174): an outside attack on the proxy's per-request
// httptrace (roundTripper.RoundTrip: "a trace called before the
// ReverseProxy's" strips the proxy's prefix from the service's 1xx
// answers). Does it change anything else: Expect: 100-continue bodies
// (100 Continue is a 1xx), the proxy's log and status, the transport's
// observers, memory per call?

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/transport"
)

// attack60Proxy is a proxy in front of h (a plain-HTTP loopback "service"
// every https://<xbox host> goes to), its transport edited by edit, its
// log in log (nil: none, as BenchmarkProxy's), and an application's
// http.Transport through it (CONNECT, TLS to its CA, HTTP/1.1 inside)
// with expect as its ExpectContinueTimeout.
func attack60Proxy(t *testing.T, h http.Handler, edit func(*transport.Transport), log io.Writer, expect time.Duration) (*Server, *http.Transport) {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	base := attack49ToUpstream{addr: up.Listener.Addr().String(), tr: &http.Transport{}}
	t.Cleanup(base.tr.CloseIdleConnections)
	lim, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := &transport.Transport{Base: base, TitleID: title, Limits: lim, Raw429: true}
	if edit != nil {
		edit(tr)
	}
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := ca.TLSConfig(Hosts(lim))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Transport: tr, TLS: tlsConf, Limits: lim}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	srv, err := New(cfg)
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
	ctr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()},
		ExpectContinueTimeout: expect, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	t.Cleanup(ctr.CloseIdleConnections)
	return srv, ctr
}

// attack60Log is a log the test reads.
type attack60Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *attack60Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *attack60Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// held: PolicyPrefix godoc "It strips the service's answers of such
// headers too"; HeaderRefused godoc "An answer the service gave never
// carries it, whatever the service sent"; RELIABILITY.md (2026-12-07
// 03:30) "strips its prefix from 1xx answers too". An application's POST
// with Expect: 100-continue, its body held (1 KiB) or streamed (200 KiB,
// over the 64 KiB the proxy holds), over HTTP/1.1 and HTTP/2 inside the
// tunnel, the application's transport waiting for the 100
// (ExpectContinueTimeout 5 s): the service answers its own
// "100 Continue" carrying Fgrl-Refused: local and Fgrl-Max-Wait, then a
// 103 carrying them, reads the body and answers 200 with its length. The
// application gets its 100 Continue (its body goes out), every 1xx it
// sees is free of the prefix, the service reads the whole body, and the
// proxy logs the call as served with status 200, as a call without 1xx
// answers.
func TestAttack60ProxyExpectContinueThroughTrace(t *testing.T) {
	log := &attack60Log{}
	_, ctr := attack60Proxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderRefused, "local")
		w.Header().Set("Fgrl-Max-Wait", "30s")
		w.WriteHeader(http.StatusContinue)
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del(HeaderRefused)
		w.Header().Del("Fgrl-Max-Wait")
		n, err := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n":%d,"err":%q,"expect":%q}`, n, fmt.Sprint(err), r.Header.Get("Expect"))
	}), nil, log, 5*time.Second)
	h2 := ctr.Clone()
	h2.ForceAttemptHTTP2 = true
	t.Cleanup(h2.CloseIdleConnections)
	for _, tc := range []struct {
		name string
		ctr  *http.Transport
		size int
	}{{"h1 held", ctr, 1 << 10}, {"h1 streamed", ctr, 200 << 10}, {"h2 held", h2, 1 << 10}, {"h2 streamed", h2, 200 << 10}} {
		size := tc.size
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var infos []string
			var continued bool
			ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
				Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
					mu.Lock()
					defer mu.Unlock()
					infos = append(infos, strconv.Itoa(code))
					for k := range h {
						if strings.HasPrefix(strings.ToLower(k), "fgrl-") {
							t.Errorf("a %d answer reached the application with %s: %q", code, k, h.Get(k))
						}
					}
					return nil
				},
				Got100Continue: func() { mu.Lock(); continued = true; mu.Unlock() },
			})
			req, _ := http.NewRequestWithContext(ctx, "POST", "https://profile.xboxlive.com/users/xuid("+xuid1+")/profile/settings/batch?t="+strconv.Itoa(size),
				bytes.NewReader(bytes.Repeat([]byte("a"), size)))
			req.Header.Set("Authorization", mock.Token(xuid1, title))
			req.Header.Set("Expect", "100-continue")
			start := time.Now()
			resp, err := tc.ctr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			t.Logf("%s %d %s in %v; 1xx seen %v, Got100Continue %v", resp.Proto, resp.StatusCode, body, time.Since(start).Round(time.Millisecond), infos, continued)
			if resp.StatusCode != 200 || !strings.Contains(string(body), fmt.Sprintf(`"n":%d,`, size)) {
				t.Errorf("answer %d %s, want 200 with the whole body read (%d bytes)", resp.StatusCode, body, size)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("the call took %v: the application waited out its ExpectContinueTimeout", time.Since(start))
			}
			if !continued {
				t.Errorf("the application never got its 100 Continue")
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // the log line is written as the handler returns
	lines := log.String()
	if n := strings.Count(lines, "status=200 outcome=served"); n != 4 {
		t.Errorf("the proxy logged %d calls served with status 200, want 4:\n%s", n, lines)
	}
}

// held: the transport's Observe hook (fgrlotel's way in) and the proxy's
// status: a service answering each call with two 103s and then a 200 is
// heard by Observe as one attempt per call, of status 200 (never 103),
// and the proxy's stats count each call served.
func TestAttack60ProxyObserveAndStatusIgnore1xx(t *testing.T) {
	var mu sync.Mutex
	var attempts []string
	srv, ctr := attack60Proxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderRefused, "local")
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del(HeaderRefused)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}), func(tr *transport.Transport) {
		tr.Observe = func(_ context.Context, e transport.Event) {
			if e.Kind == transport.EventAttempt {
				mu.Lock()
				attempts = append(attempts, strconv.Itoa(e.Status))
				mu.Unlock()
			}
		}
	}, nil, 0)
	const calls = 5
	for i := range calls {
		req, _ := http.NewRequest("GET", profileURL+"&i="+strconv.Itoa(i), nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		resp, err := ctr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("call %d: %d", i, resp.StatusCode)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(attempts, ",") != "200,200,200,200,200" {
		t.Errorf("Observe heard attempts of status %v, want five of 200", attempts)
	}
	time.Sleep(50 * time.Millisecond) // counted as the handler returns
	if n, f := srv.stats.served.Load(), srv.stats.failed.Load(); n != calls || f != 0 {
		t.Errorf("the proxy counted %d served, %d failed; want %d served", n, f, calls)
	}
}

// attack60Call sends one GET through ctr and reads its answer.
func attack60Call(t *testing.T, ctr http.RoundTripper, r *http.Request) {
	resp, err := ctr.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// attack60Requests are n GETs of profileURL, each of another user.
func attack60Requests(n int) []*http.Request {
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i], _ = http.NewRequest("GET", profileURL, nil)
		reqs[i].Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000000+i), title))
	}
	return reqs
}

// attack60Heap is the heap in use after a collection.
func attack60Heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// held: nothing a call's trace makes is retained. 3,000 calls through the
// proxy, each answered with a 103 Early Hints carrying the prefix and a
// 1 KiB Link, then 200: the heap after them is within 2 MiB (700 bytes a
// call) of the heap after the first 300 (the connections, pools and
// per-user state already made: 64 users, rotated).
func TestAttack60ProxyTraceRetainsNothing(t *testing.T) {
	link := "</" + strings.Repeat("x", 1024) + ">; rel=preload"
	_, ctr := attack60Proxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderRefused, "local")
		w.Header().Set("Link", link)
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del(HeaderRefused)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}), nil, nil, 0)
	reqs := attack60Requests(64)
	for i := range 300 {
		attack60Call(t, ctr, reqs[i%len(reqs)])
	}
	before := attack60Heap()
	const n = 3000
	for i := range n {
		attack60Call(t, ctr, reqs[i%len(reqs)])
	}
	after := attack60Heap()
	grown := int64(after) - int64(before)
	t.Logf("heap %d -> %d bytes over %d calls: %d bytes a call", before, after, n, grown/n)
	if grown > 2<<20 {
		t.Errorf("the heap grew %d bytes over %d calls with 1xx answers", grown, n)
	}
}
