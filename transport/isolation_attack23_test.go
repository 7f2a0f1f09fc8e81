package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

type attack23RT func(*http.Request) (*http.Response, error)

func (f attack23RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const attack23URL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// attack23Echo answers each request with the whole Authorization it carried and
// a counter, after delay: an answer given to the wrong caller shows.
func attack23Echo(delay time.Duration, n *atomic.Int64) attack23RT {
	return func(r *http.Request) (*http.Response, error) {
		c := n.Add(1)
		if delay > 0 {
			time.Sleep(delay)
		}
		body := fmt.Sprintf("auth=%s|lang=%s|n=%d", r.Header.Get("Authorization"), r.Header.Get("Accept-Language"), c)
		return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

func attack23Get(t *testing.T, tr http.RoundTripper, auth string, hdr map[string]string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", attack23URL, nil)
	req.Header.Set("Authorization", auth)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("call with %q: %v", auth, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// held: many users (and tokens of one user that differ only in case,
// white space or the XSTS part) read the same URL at once and again from
// the read cache; each answer must carry the caller's own Authorization.
func TestAttack23CoalesceCacheTokensThatLookAlike(t *testing.T) {
	var n atomic.Int64
	tr := &Transport{Base: attack23Echo(30*time.Millisecond, &n), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true}
	auths := []string{
		"XBL3.0 x=1111;tokenA",
		"xbl3.0 x=1111;tokenA",   // scheme in another case
		"XBL3.0 x=1111;tokena",   // token in another case
		"XBL3.0  x=1111;tokenA",  // two spaces
		"XBL3.0 x=1111;tokenA ",  // trailing space (net/http trims? the server may not)
		"XBL3.0 x=1111;tokenB",   // same userhash, another XSTS (forged or renewed)
		"XBL3.0 x=2222;tokenA",   // another userhash, same XSTS
		"XBL3.0 x=1111;tokenA;x", // longer
	}
	for round := range 2 {
		var wg sync.WaitGroup
		for i := range 40 {
			a := auths[i%len(auths)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := attack23Get(t, tr, a, nil)
				if !strings.HasPrefix(got, "auth="+strings.TrimSpace(a)+"|") && !strings.HasPrefix(got, "auth="+a+"|") {
					t.Errorf("round %d: caller with Authorization %q got another caller's answer %q; CoalesceReads promises sharing only with the same credentials (\"the whole Authorization ... compared as a SHA-256 digest: never across users, nor across two tokens of one user\")", round, a, got)
				}
			}()
		}
		wg.Wait()
	}
}

// held: the read cache keeps languages and contract versions apart, and a
// request with an If-None-Match or a Signature never takes another's answer.
func TestAttack23ReadCacheRepresentationHeaders(t *testing.T) {
	var n atomic.Int64
	tr := &Transport{Base: attack23Echo(0, &n), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true}
	a := "XBL3.0 x=1111;tokenA"
	first := attack23Get(t, tr, a, map[string]string{"Accept-Language": "en-US"})
	if got := attack23Get(t, tr, a, map[string]string{"Accept-Language": "fr-FR"}); got == first || !strings.Contains(got, "lang=fr-FR") {
		t.Errorf("a read in fr-FR was answered %q from the en-US read's cache; CoalesceReads promises Accept-Language is part of the key", got)
	}
	if got := attack23Get(t, tr, a, map[string]string{"Accept-Language": "en-US", "X-Xbl-Contract-Version": "3"}); got == first {
		t.Errorf("a read under contract 3 was answered from the cache of one without it: %q", got)
	}
	if got := attack23Get(t, tr, a, map[string]string{"Accept-Language": "en-US", "If-None-Match": `"x"`}); got == first {
		t.Errorf("a conditional read was answered from the cache: %q", got)
	}
	if got := attack23Get(t, tr, a, map[string]string{"Accept-Language": "en-US", "Signature": "AAAA"}); got == first {
		t.Errorf("a signed read was answered from an unsigned one's cache: %q", got)
	}
	// HEAD never takes a GET's cached answer.
	req, _ := http.NewRequest("HEAD", attack23URL, nil)
	req.Header.Set("Authorization", a)
	req.Header.Set("Accept-Language", "en-US")
	before := n.Load()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n.Load() == before {
		t.Errorf("a HEAD was answered from the GET's cache")
	}
}

// held: user A's 429 (Retry-After, a body that reports a small limit, and
// RateLimit headers that say nothing is left) refuses and slows only A:
// user B's next calls go at once, and B's budget (Snapshot) keeps the
// data's limit. "one user's 429 must not block every other local user".
func TestAttack23OneUsers429DoesNotReachAnother(t *testing.T) {
	const ua, ub = "1111", "2222"
	var bCalls atomic.Int64
	base := attack23RT(func(r *http.Request) (*http.Response, error) {
		uhs := xblauth.UserHashOf(r.Header.Get("Authorization"))
		if uhs == ua {
			h := http.Header{"Retry-After": {"30"}, "Content-Type": {"application/json"},
				"Ratelimit":        {`"burst";r=0;t=30`},
				"Ratelimit-Policy": {`"burst";q=10;w=15`}}
			return &http.Response{StatusCode: 429, Header: h, Request: r,
				Body: io.NopCloser(strings.NewReader(`{"limitType":"Rate","maxRequests":1,"periodInSeconds":300,"currentRequests":9}`))}, nil
		}
		bCalls.Add(1)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok " + uhs)), Request: r}, nil
	})
	var logs bytes.Buffer
	var mu sync.Mutex
	var events []Event
	tr := &Transport{Base: base, TitleID: "1234567890", Policy: Policy{NoRetry: true},
		Logger:  slog.New(slog.NewTextHandler(&syncW{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	// Two windows of A's 429s: learning must still not move B alone?
	for range 3 {
		req, _ := http.NewRequest("GET", attack23URL, nil)
		req.Header.Set("Authorization", "XBL3.0 x="+ua+";secretAAAA")
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	reqB, _ := http.NewRequest("GET", attack23URL, nil)
	reqB.Header.Set("Authorization", "XBL3.0 x="+ub+";secretBBBB")
	kb, ok := tr.KeyOf(reqB)
	if !ok || kb.User != ub || kb.Title != "1234567890" {
		t.Fatalf("KeyOf(B) = %+v, %v", kb, ok)
	}
	snapBefore, _ := tr.Snapshot(kb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	for i := range 5 {
		r := reqB.Clone(ctx)
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatalf("B's call %d failed after A's 429s: %v; the package doc promises \"one user's 429 must not block every other local user\"", i, err)
		}
		resp.Body.Close()
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("B's 5 calls took %v after A's 429s: A's Retry-After or RateLimit headers slowed B", d)
	}
	snap, _ := tr.Snapshot(kb)
	if snap.Burst.Limit < snapBefore.Burst.Limit || snap.Sustain.Limit < snapBefore.Sustain.Limit || !snap.BlockedUntil.IsZero() {
		t.Errorf("B's budget after A's 429s: %+v (before %+v): A's report moved B's key", snap, snapBefore)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := logs.String(); strings.Contains(s, "secretAAAA") || strings.Contains(s, "secretBBBB") {
		t.Errorf("a token reached the log: %s", s)
	}
	for _, e := range events {
		if s := fmt.Sprintf("%+v %v", e, e.Err); strings.Contains(s, "secret") || strings.Contains(s, ua) || strings.Contains(s, ub) {
			t.Errorf("an Event names a user: %s; Event's doc promises \"It names the service, never the user: no userhash, token or XUID\"", s)
		}
	}
}

type syncW struct {
	w  io.Writer
	mu *sync.Mutex
}

func (s *syncW) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.w.Write(p) }
