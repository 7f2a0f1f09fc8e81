package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/transport"
)

// attack3Seen is a stand-in service that records the requests it was sent
// and answers each with answer.
type attack3Seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *attack3Seen) rt(answer func(*http.Request) *http.Response) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		resp := answer(r)
		resp.Request = r
		return resp, nil
	}
}

func (s *attack3Seen) all() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

func attack3OK(*http.Request) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), ContentLength: 2}
}

// held: the hop-by-hop headers of a call, and the proxy's own access token
// in Proxy-Authorization, never reach the service; a header the client
// names in Connection is dropped, the others kept.
// Promise: proxy.go rewrite's comment ("the hop-by-hop ones and
// Proxy-Authorization the ReverseProxy strips itself"); RFC 9110 §7.6.1
// (Connection options are not forwarded).
func TestAttack3HopByHopAndProxyAuthNotForwarded(t *testing.T) {
	var seen attack3Seen
	s := inProcess(t, seen.rt(attack3OK), func(c *Config) { c.Token = "ACCESS-TOKEN-SECRET" })
	rec := send(s, t.Context(), "GET", profileURL, xuid1, nil,
		"Proxy-Authorization", "Basic "+"ZmdybDpBQ0NFU1MtVE9LRU4tU0VDUkVU", // fgrl:ACCESS-TOKEN-SECRET
		"Connection", "keep-alive, X-Drop-Me",
		"X-Drop-Me", "1", "Keep-Alive", "timeout=5", "X-Keep-Me", "2", "x-xbl-contract-version", "3")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	reqs := seen.all()
	if len(reqs) != 1 {
		t.Fatalf("%d requests sent", len(reqs))
	}
	h := reqs[0].Header
	for _, name := range []string{"Proxy-Authorization", "X-Drop-Me", "Keep-Alive", "Connection"} {
		if v := h.Values(name); len(v) > 0 {
			t.Errorf("the service got %s: %q", name, v)
		}
	}
	if h.Get("X-Keep-Me") != "2" || h.Get("Authorization") == "" {
		t.Errorf("the service lost end-to-end headers: %v", h)
	}
}

// held: a request in absolute form with a Host header naming another host
// goes to the URL's host, never to the Host header's.
// Promise: proxy.go package doc "A plain HTTP request in absolute form ...
// is served the same way" (as a tunnelled one: to the Xbox host named);
// RFC 9112 §3.2.2 (a server ignores Host when the target is absolute).
func TestAttack3AbsoluteFormHostHeaderIgnored(t *testing.T) {
	var seen attack3Seen
	s := inProcess(t, seen.rt(attack3OK), nil)
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Host = "evil.example:8443"
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	rec := &attack3Recorder{h: http.Header{}}
	s.serveHTTP(rec, req)
	for _, r := range seen.all() {
		if r.Host != "" && r.Host != "profile.xboxlive.com" || r.URL.Host != "profile.xboxlive.com" {
			t.Errorf("sent to URL host %q, Host %q", r.URL.Host, r.Host)
		}
	}
	if len(seen.all()) != 1 {
		t.Errorf("%d requests sent, status %d", len(seen.all()), rec.code)
	}
}

type attack3Recorder struct {
	h    http.Header
	code int
	b    strings.Builder
}

func (r *attack3Recorder) Header() http.Header { return r.h }
func (r *attack3Recorder) WriteHeader(c int) {
	if r.code == 0 {
		r.code = c
	}
}
func (r *attack3Recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.b.Write(p)
}

// TestAttack3OddRetryAfterFromService: the service answers 429 with a
// Retry-After that is malformed, negative, past the bound, fractional or a
// date; the proxy (without Raw429) answers the application as the transport
// decides: 429, a Retry-After of whole non-negative seconds, and FGRL's JSON
// body. Promise: refuse.go's doc ("Retry-After te's wait, and for a 429 the
// RateLimit headers and FGRL's JSON body"); README.md "For code in other
// languages" ("answered 429 with Retry-After, the RateLimit headers, the FGRL
// JSON body"); RFC 9110 §10.2.3 (Retry-After: HTTP-date / delay-seconds).
func TestAttack3OddRetryAfterFromService(t *testing.T) {
	for _, ra := range []string{"abc", "-5", "99999999999999999999999", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT", "", " 2 ", "0"} {
		t.Run(strconv.Quote(ra), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var seen attack3Seen
				svc := seen.rt(func(*http.Request) *http.Response {
					h := http.Header{"Content-Type": {"text/html"}}
					if ra != "" {
						h.Set("Retry-After", ra)
					}
					return &http.Response{StatusCode: 429, Header: h, Body: io.NopCloser(strings.NewReader("<html>slow down</html>")), ContentLength: -1}
				})
				s := inProcess(t, svc, func(c *Config) {
					c.Transport = &transport.Transport{Base: svc, TitleID: title}
				})
				rec := send(s, t.Context(), "GET", profileURL, xuid1, nil, HeaderNoRetry, "true", "x-xbl-contract-version", "3")
				if rec.Code != 429 {
					t.Fatalf("status %d, want 429: %s", rec.Code, rec.Body)
				}
				got := rec.Header().Get("Retry-After")
				if n, err := strconv.ParseUint(got, 10, 63); err != nil || n > 24*3600 {
					t.Errorf("Retry-After %q: not whole seconds within a day", got)
				}
				var b ratelimit.Body
				if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.LimitType == "" {
					t.Errorf("body %q is not FGRL's JSON body: %v", rec.Body, err)
				}
				if rec.Header().Get(HeaderRefused) != "" {
					t.Errorf("%s set on the service's own 429", HeaderRefused)
				}
			})
		})
	}
}

// held: a caller with a valid token of their own presenting another user's
// userhash spends none of that user's budget: the mock answers 401 and the
// slot goes back, so the other user's burst is whole.
// Promise: RELIABILITY.md "The proxy" (one user's spent budget "refuses
// none of another's calls"; a 401's slot goes back).
func TestAttack3OwnTokenOtherUserhashSpendsNoBudget(t *testing.T) {
	f := serve(t, nil)
	_, tok := pxAtk2Tokens(xuid1)
	forged := "XBL3.0 x=" + mock.UserHash(xuid2) + ";" + tok
	rs := burst(t, f.client, 12, profileURL, xuid1, "Authorization", forged, HeaderFailFast, "true")
	got, _ := statuses(rs)
	if got[http.StatusOK] != 0 {
		t.Fatalf("the forged calls got %v: the service took a token under another userhash", got)
	}
	ok := 0
	for range 10 {
		resp, _, err := get(t, f.client, t.Context(), profileURL, xuid2, HeaderFailFast, "true")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			ok++
		}
	}
	if ok != 10 {
		t.Errorf("user %s got %d of the burst's 10 after forged calls under their userhash (%v)", xuid2, ok, got)
	}
}

// held: two Host headers inside a tunnel are refused 400; Content-Length
// beside Transfer-Encoding with a second request behind is read as chunked
// (net/http's choice), so the second is served as the same peer's next
// request on its own connection: no answer crosses to another client.
// Promise: RELIABILITY.md "The proxy" (malformed requests in a tunnel
// "panic nothing"); RFC 9112 §6.3 (Content-Length with Transfer-Encoding:
// treat as an error or close the connection after).
func TestAttack3SmugglingInTunnel(t *testing.T) {
	f := serve(t, nil)
	auth := mock.Token(xuid1, title)
	for _, text := range []string{
		"GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\nHost: evil.example\r\nAuthorization: " + auth + "\r\n\r\n",
	} {
		tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
		io.WriteString(tc, text)
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			io.ReadAll(resp.Body)
			if resp.StatusCode != 400 {
				t.Errorf("two Host headers: %d, want 400", resp.StatusCode)
			}
		}
		tc.Close()
	}
	// CL + TE: the smuggled request, for a path with a marker, must not be
	// sent as a request of its own unless the connection serves it after.
	tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
	defer tc.Close()
	smuggled := "GET /users/me/profile/settings?settings=SMUGGLED HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth + "\r\nx-xbl-contract-version: 3\r\n\r\n"
	io.WriteString(tc, "POST /users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+
		"\r\nx-xbl-contract-version: 2\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+smuggled)
	var codes []int
	r := bufio.NewReader(br)
	for range 2 {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		io.ReadAll(resp.Body)
		codes = append(codes, resp.StatusCode)
	}
	t.Logf("answers %v, sent %d", codes, f.tr.Stats().Attempts)
	if len(codes) == 0 {
		t.Errorf("no answer to a request with Content-Length and Transfer-Encoding")
	}
}

// held: a peer off loopback whose Proxy-Authorization carries a wrong
// token (a real token pasted in the wrong place) and whose CONNECT is
// refused 407: neither the log nor the answer quotes it, nor the right
// access token.
// Promise: proxy.go package doc ("no token reaches its log, status or
// errors"); Config.Token (407 without it, RELIABILITY.md "The proxy",
// TestAccess row).
func TestAttack3WrongProxyAuthorizationNotLogged(t *testing.T) {
	logger, logs := pxAtk2Logged()
	s := inProcess(t, roundTripFunc(func(*http.Request) (*http.Response, error) { return attack3OK(nil), nil }), func(c *Config) {
		c.Token = "RIGHT-ACCESS-TOKEN"
		c.Logger = logger
	})
	_, tok := pxAtk2Tokens(xuid1)
	for _, v := range []string{"Bearer " + tok, "Basic " + "ZmdybDpXUk9ORy1TRUNSRVQ=", "XBL3.0 x=1;" + tok} { // fgrl:WRONG-SECRET
		req, _ := http.NewRequest("CONNECT", "https://profile.xboxlive.com:443", nil)
		req.Host = "profile.xboxlive.com:443"
		req.RemoteAddr = "192.0.2.7:5000"
		req.Header.Set("Proxy-Authorization", v)
		rec := &attack3Recorder{h: http.Header{}}
		s.serveHTTP(rec, req)
		if rec.code != http.StatusProxyAuthRequired {
			t.Errorf("%d, want 407", rec.code)
		}
		for _, secret := range []string{tok, "WRONG-SECRET", "RIGHT-ACCESS-TOKEN", "ZmdybDpXUk9ORy1TRUNSRVQ"} {
			if strings.Contains(rec.b.String(), secret) || strings.Contains(logs.String(), secret) {
				t.Errorf("%q in the answer or the log", secret)
			}
		}
	}
}
