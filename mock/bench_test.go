package mock

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
)

// discard is a reusable ResponseWriter, so the benchmarks measure the
// handler and not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

func benchServe(b *testing.B, h *Handler, req *http.Request) {
	w := &discard{h: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// BenchmarkServeHTTPAdmitted serves a profile read for one pair whose
// budget never runs out: its clock advances 10 ms a call against limits of
// 100000, so windows hold at most 30000.
func BenchmarkServeHTTPAdmitted(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(10 * time.Millisecond); return now }
	h := Must(New(Config{Limits: bigLimits(b), Now: clock}))
	req := httptest.NewRequest("GET", profileURL, nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", Token(xuid1, title1))
	benchServe(b, h, req)
}

// BenchmarkRoundTripAdmitted is BenchmarkServeHTTPAdmitted through
// Handler.RoundTrip, the in-process mock (no socket) that the what-if
// replays every call through and tests use as a transport's Base: the
// server's request and the recorded answer are the mock's to make.
func BenchmarkRoundTripAdmitted(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(10 * time.Millisecond); return now }
	h := Must(New(Config{Limits: bigLimits(b), Now: clock}))
	req, err := http.NewRequest("GET", profileURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", Token(xuid1, title1))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := h.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(resp, err)
		}
		resp.Body.Close()
	}
}

// BenchmarkServeHTTPAdmittedUsers is BenchmarkServeHTTPAdmitted with the
// load of bench/wrk-tokens.lua: each request carries the next of n users'
// tokens, in the form net/http's server hands a handler (RequestURI the
// path and query as sent). At 1,000 users (wrk's) each token comes again
// within a thousand requests; at 200,000 (BenchmarkLoopback's) hardly ever
// within the run's first seconds.
func BenchmarkServeHTTPAdmittedUsers(b *testing.B) {
	for _, n := range []int{1_000, 200_000} {
		b.Run("users="+strconv.Itoa(n), func(b *testing.B) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clock := func() time.Time { now = now.Add(10 * time.Millisecond); return now }
			h := Must(New(Config{Limits: bigLimits(b), Now: clock}))
			auths := make([][]string, n) // one request, each user's header in turn
			for i := range auths {
				auths[i] = []string{Token(strconv.Itoa(2533274790000000+i), title1)}
			}
			req := httptest.NewRequest("GET", profileURL, nil)
			req.RequestURI = req.URL.RequestURI()
			w := &discard{h: make(http.Header)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				clear(w.h)
				req.Header["Authorization"] = auths[i%n]
				h.ServeHTTP(w, req)
				i++
			}
		})
	}
}

// BenchmarkServeHTTPLogged is BenchmarkServeHTTPAdmitted with Config.Logger
// writing JSON lines: the cost of xblcall mock's request log.
func BenchmarkServeHTTPLogged(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(10 * time.Millisecond); return now }
	h := Must(New(Config{Limits: bigLimits(b), Now: clock, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
	req := httptest.NewRequest("GET", profileURL, nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", Token(xuid1, title1))
	benchServe(b, h, req)
}

// BenchmarkServeHTTPRefused answers 429 to a throttled pair.
func BenchmarkServeHTTPRefused(b *testing.B) {
	h := NewHandler()
	req := httptest.NewRequest("GET", profileURL, nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", Token(xuid1, title1))
	for i := 0; i < 40; i++ {
		h.ServeHTTP(&discard{h: make(http.Header)}, req)
	}
	benchServe(b, h, req)
}

func bigLimits(b *testing.B) *limits.Limits {
	l, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkLoopback compares the mock server's throughput over loopback with
// a bare net/http handler writing a body of the same size, in the same run.
// Each request comes from one of many users, so nearly all are admitted.
// The ratio of the two ns/op figures is the mock's relative throughput.
func BenchmarkLoopback(b *testing.B) {
	const users = 200_000
	tokens := make([]string, users)
	for i := range tokens {
		tokens[i] = Token(strconv.Itoa(2533274790000000+i), title1)
	}
	s := NewServer(nil)
	defer s.Close()
	bodyLen := probeBody(b, s.Client(), tokens[0])
	body := make([]byte, bodyLen)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	}))
	defer bare.Close()
	// Both servers get the same request from the same kind of client: the
	// URL names the server, the Host header the profile service (which the
	// bare handler ignores), so the client does the same work for either.
	run := func(b *testing.B, c *http.Client, url string) {
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest("GET", url, nil)
				req.Host = "profile.xboxlive.com"
				req.Header.Set("Authorization", tokens[next.Add(1)%users])
				resp, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	const path = "/users/me/profile/settings?settings=Gamertag"
	b.Run("bare", func(b *testing.B) { run(b, bare.Client(), bare.URL+path) })
	b.Run("mock", func(b *testing.B) { run(b, s.srv.Client(), s.URL+path) })
}

func probeBody(b *testing.B, c *http.Client, tok string) int {
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Header.Set("Authorization", tok)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	return int(n)
}

// BenchmarkMemoryUsers reports the mock's heap per distinct user after one
// profile call each, at n users.
func BenchmarkMemoryUsers(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			req := httptest.NewRequest("GET", profileURL, nil)
			req.Host = "profile.xboxlive.com"
			w := &discard{h: make(http.Header)}
			var perUser float64
			b.ReportAllocs()
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				h := NewHandler()
				for i := 0; i < n; i++ {
					req.Header.Set("Authorization", Token(strconv.Itoa(2533274790000000+i), title1))
					h.ServeHTTP(w, req)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perUser = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(h)
			}
			b.ReportMetric(perUser, "bytes/user")
		})
	}
}

// BenchmarkReplayNote is what the record of signatures costs a signed call
// under signIn.mu, with the record about half full or more: a signature
// taken (the clock 20 ms on a call, 50 calls a second over a thousand
// keys, so that the record forgets as it notes), and one refused because
// its key's share is full, the record one place short of full
// (TestAttack3KeyFullRefusal: a refusal reads its key's earliest end, not
// the record).
func BenchmarkReplayNote(b *testing.B) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	b.Run("taken", func(b *testing.B) {
		h := Must(New(Config{Now: func() time.Time { return now }}))
		for i := range replayCapacity / 2 {
			h.signIn.fresh(testSig(i, now), testKey(i%16), now)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			at := now.Add(time.Duration(i) * 20 * time.Millisecond)
			if f, _ := h.signIn.fresh(testSig(1<<30+i, at), testKey(16+i%1000), at); f != sigFresh {
				b.Fatalf("call %d: %v", i, f)
			}
		}
	})
	b.Run("refused-key-full", func(b *testing.B) {
		h := Must(New(Config{Now: func() time.Time { return now }}))
		fillKeyShares(b, h, now)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if f, _ := h.signIn.fresh(testSig(1<<31+i, now), testKey(0), now); f != sigFull {
				b.Fatalf("call %d: %v", i, f)
			}
		}
	})
}
