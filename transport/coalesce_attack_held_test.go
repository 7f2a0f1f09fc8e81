package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttackCoalHeldCopyIsolation: "copied to each": a caller that mutates
// its answer's Header, Trailer and Request does not change what the next
// caller (cache) gets. Held.
func TestAttackCoalHeldCopyIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"X-A": {"1"}}, Trailer: http.Header{"X-T": {"t"}}, Request: r,
				ContentLength: 5, Body: io.NopCloser(strings.NewReader("hello"))}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
		r1, _, _ := attackGet(t, tr, context.Background(), attackURL, nil)
		r1.Header.Set("X-A", "evil")
		r1.Header["X-A"][0] = "evil2"
		r1.Header.Add("X-New", "x")
		r1.Trailer.Set("X-T", "evil")
		r1.Request.Header.Set("Authorization", "XBL3.0 x=2222;other")
		r2, b2, _ := attackGet(t, tr, context.Background(), attackURL, nil)
		if r2.Header.Get("X-A") != "1" || r2.Header.Get("X-New") != "" || r2.Trailer.Get("X-T") != "t" || b2 != "hello" ||
			r2.Request == r1.Request || r2.Request.Header.Get("Authorization") != "XBL3.0 x=1111;token-a" {
			t.Errorf("second caller saw the first's mutations: %v %v %q", r2.Header, r2.Trailer, b2)
		}
	})
}

// TestAttackCoalHeldNotKept: "An answer with Set-Cookie or Cache-Control
// no-store or no-cache is not kept", only 200s are, "at most its
// Cache-Control max-age", and an answer that "varies on another header
// (Vary)" stays its caller's. Header names spelt in lower case by a hand
// built base. Held.
func TestAttackCoalHeldNotKept(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		sleep  time.Duration
	}{
		{"control-plain-200-is-kept", 200, http.Header{"Cache-Control": {"private, max-age=5"}}, 0},
		{"set-cookie-lower", 200, http.Header{"set-cookie": {"a=b"}}, 0},
		{"no-store-second-line", 200, http.Header{"Cache-Control": {"private", "No-Store"}}, 0},
		{"no-cache-arg", 200, http.Header{"cache-control": {`no-cache="Set-Cookie"`}}, 0},
		{"max-age-0", 200, http.Header{"Cache-Control": {"max-age=0"}}, 0},
		{"max-age-1-expired", 200, http.Header{"Cache-Control": {"max-age=1"}}, 1500 * time.Millisecond},
		{"vary-other", 200, http.Header{"vary": {"Accept, X-Xbl-Market"}}, 0},
		{"vary-star", 200, http.Header{"Vary": {"*"}}, 0},
		{"401", 401, http.Header{}, 0},
		{"503", 503, http.Header{}, 0},
		{"404", 404, http.Header{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &attackEcho{body: func(*http.Request) string { return "x" }, hdr: tc.h}
				var st atomic.Int32
				st.Store(int32(tc.status))
				rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := base.RoundTrip(r)
					resp.StatusCode = int(st.Load())
					return resp, err
				})
				tr := &Transport{Base: rt, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second, RetryWindow: -1, Raw429: true}
				attackGet(t, tr, context.Background(), attackURL, nil)
				time.Sleep(tc.sleep)
				attackGet(t, tr, context.Background(), attackURL, nil)
				want := int32(2)
				if strings.HasPrefix(tc.name, "control") {
					want = 1
				}
				if base.n.Load() != want {
					t.Errorf("%s answer kept: %d request(s) for 2 calls", tc.name, base.n.Load())
				}
			})
		})
	}
}

// TestAttackCoalHeldCredentialTricks: "never across users, nor across two
// tokens of one user"; "A call whose credentials the transport cannot read
// (... one given twice) always sends its own". Held.
func TestAttackCoalHeldCredentialTricks(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b http.Header
	}{
		{"token-after-separator", http.Header{}, http.Header{"Authorization": {"XBL3.0 x=1111;token-b"}}},
		{"token-suffix", http.Header{}, http.Header{"Authorization": {"XBL3.0 x=1111;token-a "}}},
		{"userhash", http.Header{}, http.Header{"Authorization": {"XBL3.0 x=1112;token-a"}}},
		{"cookie-vs-cookie", http.Header{"Cookie": {"s=1"}}, http.Header{"Cookie": {"s=1"}, "cookie": {"s=2"}}},
		{"cookie-differs", http.Header{"Cookie": {"s=1"}}, http.Header{"Cookie": {"s=2"}}},
		{"authorization-two-spellings", http.Header{}, http.Header{"authorization": {"XBL3.0 x=2222;token-z"}}},
		{"signature-header", http.Header{"Signature": {"AAA"}}, http.Header{"Signature": {"BBB"}}},
		{"host-header", http.Header{}, http.Header{"X-Host": {"other.example"}}},
		{"escaped-path", http.Header{}, http.Header{"X-Url": {"https://profile.xboxlive.com/users/me/profile/settings%3Fsettings=Gamertag"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &attackEcho{body: func(r *http.Request) string { return r.Host + " " + r.URL.RequestURI() + " " + fmt.Sprint(r.Header) }}
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
				send := func(h http.Header) string {
					req, _ := http.NewRequest("GET", attackURL, nil)
					if u := h.Get("X-Url"); u != "" {
						req, _ = http.NewRequest("GET", u, nil)
					}
					if hh := h.Get("X-Host"); hh != "" {
						req.Host = hh
					}
					req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
					for k, v := range h {
						if k == "Authorization" {
							req.Header[k] = v
						} else if k != "X-Host" && k != "X-Url" {
							req.Header[k] = append(req.Header[k], v...)
						}
					}
					resp, err := tr.RoundTrip(req)
					if err != nil {
						return err.Error()
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					return string(b)
				}
				send(tc.a)
				send(tc.b)
				if base.n.Load() != 2 {
					t.Errorf("%s: shared: %d request(s)", tc.name, base.n.Load())
				}
			})
		})
	}
}

type attackPanicBody struct{}

func (attackPanicBody) Read([]byte) (int, error) { panic("atk: body reader panics") }
func (attackPanicBody) Close() error             { return nil }

// TestAttackCoalHeldLeaderPanics: the leader's body reader panics; the
// flight lands ("however the call ends, a panic included") and the
// follower gets its own answer without waiting its whole bound. Held.
func TestAttackCoalHeldLeaderPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if n.Add(1) == 1 {
				time.Sleep(time.Second)
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1, Body: attackPanicBody{}}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: 2, Body: io.NopCloser(strings.NewReader("ok"))}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
		var wg sync.WaitGroup
		var panicked any
		wg.Go(func() {
			defer func() { panicked = recover() }()
			attackGet(t, tr, context.Background(), attackURL, nil)
		})
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		var body string
		var err error
		wg.Go(func() { _, body, err = attackGet(t, tr, context.Background(), attackURL, nil) })
		wg.Wait()
		if panicked == nil || body != "ok" || err != nil || time.Since(start) > 2*time.Second {
			t.Errorf("panicked %v, follower %q %v after %v", panicked, body, err, time.Since(start))
		}
		if got := tr.reads.buffered.Load(); got != 0 {
			t.Errorf("buffered bytes left reserved after a panic: %d", got)
		}
	})
}

// TestAttackCoalHeldFollowerDeadline: a server stalls mid-body; a follower
// "never [waits] past its context". Held.
func TestAttackCoalHeldFollowerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			pr, pw := io.Pipe()
			go func() {
				pw.Write([]byte("partial"))
				<-r.Context().Done()
				pw.CloseWithError(r.Context().Err())
			}()
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1, Body: pr}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
		lctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { attackGet(t, tr, lctx, attackURL, nil) })
		time.Sleep(100 * time.Millisecond)
		ctx, c2 := context.WithTimeout(context.Background(), time.Second)
		defer c2()
		start := time.Now()
		_, _, err := attackGet(t, tr, ctx, attackURL, nil)
		if took := time.Since(start); took > time.Second || err == nil {
			t.Errorf("follower with a 1s deadline returned after %v: %v", took, err)
		}
		cancel()
		wg.Wait()
	})
}

// TestAttackCoalHeldEntryBound: "The cache holds at most 4,096 answers".
// Held.
func TestAttackCoalHeldEntryBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &attackEcho{body: func(*http.Request) string { return "x" }}
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
		for i := range 5000 {
			attackGet(t, tr, context.Background(), fmt.Sprintf("%s&n=%d", attackURL, i), nil)
		}
		tr.reads.mu.Lock()
		n, b := len(tr.reads.cache), tr.reads.bytes
		tr.reads.mu.Unlock()
		if n > maxCachedEntries || b > maxCachedBytes {
			t.Errorf("cache holds %d answers, %d bytes", n, b)
		}
	})
}

// TestAttackCoalHeldRaceUsers: many goroutines of several users over a real
// loopback server; each must get its own user's answer and may mutate it
// freely (run with -race). Held.
func TestAttackCoalHeldRaceUsers(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("X-User", r.Header.Get("Authorization"))
		fmt.Fprint(w, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	hc := srv.Client().Transport.(*http.Transport)
	defer hc.CloseIdleConnections()
	tr := &Transport{Base: hc, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: time.Second, DisableBudget: true}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			auth := fmt.Sprintf("XBL3.0 x=%d;token-%d", i%4, i%8)
			for range 5 {
				req, _ := http.NewRequest("GET", srv.URL+"/users/me", nil)
				req.Header.Set("Authorization", auth)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Header.Set("X-User", "mutated")
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != auth {
					t.Errorf("caller %q got %q", auth, b)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d requests for 320 calls", hits.Load())
}

// TestAttackCoalHeldUserinfo: two calls to one loopback server whose URLs
// carry different userinfo, through an http.Client (which turns userinfo
// into an Authorization header when the request's canonical one is
// empty: here the token is under "authorization"). Each must get its own
// answer. Held (the client's Basic header makes the credentials
// unreadable: no sharing).
func TestAttackCoalHeldUserinfo(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, strings.Join(r.Header.Values("Authorization"), "|"))
	}))
	defer srv.Close()
	hc := srv.Client().Transport.(*http.Transport)
	defer hc.CloseIdleConnections()
	c := &http.Client{Transport: &Transport{Base: hc, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}}
	var got []string
	for _, user := range []string{"alice:pw1", "bob:pw2"} {
		req, _ := http.NewRequest("GET", strings.Replace(srv.URL, "http://", "http://"+user+"@", 1)+"/x", nil)
		req.Header["authorization"] = []string{"XBL3.0 x=1111;token-a"}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, string(b))
	}
	if hits.Load() != 2 || got[0] == got[1] {
		t.Errorf("userinfo ignored: %d request(s), answers %q", hits.Load(), got)
	}
}
