package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// attack3CoalGet sends one GET through tr with token-a and returns its body or
// its error's text.
func attack3CoalGet(tr http.RoundTripper, req *http.Request) (string, error) {
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestAttack3CoalSharpSHostsShareAKey checks transport.Transport.CoalesceReads
// (transport.go:127-129): identical GETs share one request only when sent "to
// the same scheme, host and URL". The key lower-cases the host with
// strings.ToLower, under which U+1E9E (capital sharp s) becomes U+00DF (ß);
// but net/http dials the host through IDNA (UTS #46, non-transitional
// since Go 1.18: GOROOT/src/vendor/golang.org/x/net/idna/go118.go
// transitionalLookup = false; net/http canonicalAddr uses idna.Lookup),
// which maps U+1E9E to "ss" and keeps ß (punycode "xn--zca"). So
// "ẞ.example" (dialed as ss.example) and "ß.example" (xn--zca.example)
// are two hosts and share one key: the read of the second is never sent
// and gets the first host's answer.
func TestAttack3CoalSharpSHostsShareAKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "answer of host "+r.Host)
	}))
	defer srv.Close()
	var mu sync.Mutex
	var dialed []string
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer base.CloseIdleConnections()
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second, AllowInsecure: true}
	var got []string
	for _, u := range []string{"http://\u1e9e.example/users/me", "http://\u00df.example/users/me"} {
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := attack3CoalGet(tr, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if got[0] == got[1] || len(dialed) != 2 {
		t.Errorf("a read of \u00df.example got the answer of another host: dialed %q, answers %q", dialed, got)
	}
}

// TestAttack3CoalLeaderCancelledByRequestCancel checks Transport.CoalesceReads
// (transport.go:145-148): a caller that waited sends its own "when ... its
// wait ended with the other call's caller giving up". A caller that gives
// up through http.Request.Cancel (deprecated, still honoured by
// net/http.Transport: "If non-nil, it should be closed to cancel the
// request" and used by http.Client's Timeout path in older code) leaves its
// context alive, so the flight is not marked cancelled and the follower,
// which gave up on nothing, gets "net/http: request canceled".
func TestAttack3CoalLeaderCancelledByRequestCancel(t *testing.T) {
	var n atomic.Int32
	firstIn := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			close(firstIn)
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "fresh")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	// One attempt (RetryWindow < 0), so that the leader ends at its cancel.
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, RetryWindow: -1}
	cancel := make(chan struct{})
	leaderDone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("GET", srv.URL+"/users/me", nil)
		//lint:ignore SA1019 the deprecated Cancel is what this test gives up through
		req.Cancel = cancel
		_, err := attack3CoalGet(tr, req)
		leaderDone <- err
	}()
	<-firstIn
	followerDone := make(chan struct{})
	var fb string
	var ferr error
	go func() {
		defer close(followerDone)
		ctx, c := context.WithTimeout(context.Background(), 4*time.Second)
		defer c()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/users/me", nil)
		fb, ferr = attack3CoalGet(tr, req)
	}()
	time.Sleep(50 * time.Millisecond) // the follower joins the flight
	close(cancel)
	if err := <-leaderDone; err == nil {
		t.Fatal("the leader was not cancelled")
	}
	<-followerDone
	if ferr != nil || fb != "fresh" {
		t.Errorf("a follower got the error of another caller's giving up (Request.Cancel): %v (body %q)", ferr, fb)
	}
}

// attack3CoalFixed answers every request 200 with body "answer N" (N counting
// requests) and the given headers.
func attack3CoalFixed(n *atomic.Int32, h http.Header) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b := "answer " + string(rune('0'+n.Add(1)))
		hh := http.Header{}
		for k, v := range h {
			hh[k] = v
		}
		return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: hh, Request: r,
			ContentLength: int64(len(b)), Body: io.NopCloser(strings.NewReader(b))}, nil
	})
}

// TestAttack3CoalCacheFreshnessIgnoresAge checks Transport.ReadCacheTTL
// (transport.go:155-157): an answer is kept "at most its Cache-Control
// max-age" (RELIABILITY.md round 4: "a shorter max-age ... not cached").
// max-age is a freshness lifetime counted from the answer's generation,
// and Age says how much of it is gone (RFC 9111 4.2.3, 5.1): "max-age=5"
// with "Age: 5" is already stale, and Expires in the past without
// max-age is too (RFC 9111 4.2.1, 5.3). The cache keeps both for the
// whole TTL.
func TestAttack3CoalCacheFreshnessIgnoresAge(t *testing.T) {
	for name, h := range map[string]http.Header{
		"age-equals-max-age": {"Cache-Control": {"max-age=5"}, "Age": {"5"}},
		"age-past-max-age":   {"Cache-Control": {"max-age=5"}, "Age": {"3600"}},
		"expires-past":       {"Expires": {"Thu, 01 Jan 1970 00:00:00 GMT"}, "Date": {"Sat, 05 Dec 2026 08:00:00 GMT"}},
		"expires-zero":       {"Expires": {"0"}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				tr := &Transport{Base: attack3CoalFixed(&n, h), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
				req, _ := http.NewRequest("GET", attackURL, nil)
				if _, err := attack3CoalGet(tr, req); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
				req, _ = http.NewRequest("GET", attackURL, nil)
				b, err := attack3CoalGet(tr, req)
				if err != nil {
					t.Fatal(err)
				}
				if n.Load() != 2 {
					t.Errorf("a stale answer (%v) was served from the cache 1 s later: %q, %d request(s)", h, b, n.Load())
				}
			})
		})
	}
}

// held: statuses other than 200 (302, 204, 203, a Raw429 429) are not kept
// (ReadCacheTTL, transport.go:155: "keeps each 200 answer").
func TestAttack3CoalHeldOnly200Kept(t *testing.T) {
	for _, status := range []int{302, 204, 203, 429, 410} {
		synctest.Test(t, func(t *testing.T) {
			var n atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				n.Add(1)
				h := http.Header{}
				if status == 302 {
					h.Set("Location", "https://profile.xboxlive.com/elsewhere")
				}
				return &http.Response{StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: r,
					Body: io.NopCloser(strings.NewReader("x"))}, nil
			})
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second, Raw429: true, RetryWindow: -1, DisableBudget: true}
			for range 2 {
				req, _ := http.NewRequest("GET", attackURL, nil)
				attack3CoalGet(tr, req)
				time.Sleep(100 * time.Millisecond)
			}
			if n.Load() != 2 {
				t.Errorf("a %d answer was kept: %d request(s) for 2 reads", status, n.Load())
			}
		})
	}
}

// held: requests that go to other places or ask otherwise never share
// (CoalesceReads, transport.go:127-129: "a GET (no body ...) to the same
// scheme, host and URL"): %2F against /, a trailing dot on the host, a
// HEAD, a GET with a body, a lower-case method.
func TestAttack3CoalHeldOtherRequestsNotShared(t *testing.T) {
	mk := func(method, u string, body io.Reader) func() *http.Request {
		return func() *http.Request { r, _ := http.NewRequest(method, u, body); return r }
	}
	for name, pair := range map[string][2]func() *http.Request{
		"escaped-slash": {mk("GET", "https://profile.xboxlive.com/users/a/b", nil), mk("GET", "https://profile.xboxlive.com/users/a%2Fb", nil)},
		"trailing-dot":  {mk("GET", "https://profile.xboxlive.com/users/me", nil), mk("GET", "https://profile.xboxlive.com./users/me", nil)},
		"head":          {mk("GET", attackURL, nil), mk("HEAD", attackURL, nil)},
		"get-body":      {mk("GET", attackURL, nil), mk("GET", attackURL, strings.NewReader("q"))},
		"lower-get":     {mk("GET", attackURL, nil), mk("get", attackURL, nil)},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				tr := &Transport{Base: attack3CoalFixed(&n, nil), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second, DisableBudget: true}
				attack3CoalGet(tr, pair[0]())
				attack3CoalGet(tr, pair[1]())
				if n.Load() != 2 {
					t.Errorf("%s: shared: %d request(s)", name, n.Load())
				}
			})
		})
	}
}

// held: a caller that never reads nor closes its shared body holds no one
// else: 50 callers, one of them never reading, all end, with one request
// (CoalesceReads, transport.go:127).
func TestAttack3CoalHeldUnreadSharedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		release := make(chan struct{})
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			<-release
			return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Request: r,
				Body: io.NopCloser(strings.NewReader(strings.Repeat("z", 1<<16)))}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, DisableBudget: true}
		var wg sync.WaitGroup
		var ok atomic.Int32
		for i := range 50 {
			wg.Go(func() {
				req, _ := http.NewRequest("GET", attackURL, nil)
				req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					return
				}
				if i == 0 {
					return // never read, never closed
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if len(b) == 1<<16 {
					ok.Add(1)
				}
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		if ok.Load() != 49 || n.Load() != 1 {
			t.Errorf("%d of 49 readers got the answer, %d request(s)", ok.Load(), n.Load())
		}
	})
}

// held: followers whose contexts end while the leader reads a slow body
// end at once with their own context's error, and the leader and a later
// caller still get the answer (CoalesceReads, transport.go:143-144: "never
// past its context"). Run with -race.
func TestAttack3CoalHeldFollowersLeaveWhileLeaderReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Request: r,
				Body: io.NopCloser(&attack3CoalSlow{left: 10})}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second, DisableBudget: true}
		var wg sync.WaitGroup
		var leaderBody string
		wg.Go(func() {
			req, _ := http.NewRequest("GET", attackURL, nil)
			leaderBody, _ = attack3CoalGet(tr, req)
		})
		synctest.Wait()
		errs := make([]error, 10)
		for i := range errs {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(100+i)*time.Millisecond)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", attackURL, nil)
				start := time.Now()
				_, errs[i] = attack3CoalGet(tr, req)
				if d := time.Since(start); d > 200*time.Millisecond {
					t.Errorf("follower %d took %v past its 100 ms context", i, d)
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != context.DeadlineExceeded {
				t.Errorf("follower %d: %v, want context.DeadlineExceeded", i, err)
			}
		}
		if leaderBody != strings.Repeat("s", 10) {
			t.Errorf("leader got %q", leaderBody)
		}
		req, _ := http.NewRequest("GET", attackURL, nil)
		if b, _ := attack3CoalGet(tr, req); b != leaderBody || n.Load() != 1 {
			t.Errorf("a later caller: %q, %d request(s)", b, n.Load())
		}
	})
}

// attack3CoalSlow yields one byte a second.
type attack3CoalSlow struct{ left int }

func (s *attack3CoalSlow) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(time.Second)
	s.left--
	p[0] = 's'
	return 1, nil
}
