package proxy

// Attack 220: the request-trailer forwarding of 8074b4c (trailedBody,
// stripTrailer), driven as an outsider over loopback: raw HTTP/1.1 in a
// decrypted tunnel, and HTTP/2 through CONNECT with net/http's client.

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

const attack96AccessToken = "ATK220-ACCESS-TOKEN"

// attack96Secrets are the values that must never reach the service.
var attack96Secrets = []string{
	"FGRL-SECRET-VAL",
	attack96AccessToken,
	base64.StdEncoding.EncodeToString([]byte("app:" + attack96AccessToken)),
	"HOPBYHOP-VAL",
}

// attack96Seen returns every "where name: value" the service got that holds
// one of secrets, in its header or its trailer.
func attack96Seen(p attack92Post, secrets []string) []string {
	var out []string
	for where, h := range map[string]http.Header{"header": p.header, "trailer": p.trailer} {
		for k, vs := range h {
			for _, v := range vs {
				for _, s := range secrets {
					if strings.Contains(v, s) || strings.Contains(k, s) {
						out = append(out, where+" "+k+": "+v)
					}
				}
			}
		}
	}
	if strings.Contains(p.body, attack96AccessToken) {
		out = append(out, "body holds the access token")
	}
	return out
}

// attack96H1Trailer sends, in a decrypted tunnel, a chunked POST with the
// extra header lines and the trailer section given ("Name: value" lines),
// and returns the answer's status and what the service got.
func attack96H1Trailer(t *testing.T, failFast bool, extra []string, section []string) (int, string, []attack92Post) {
	t.Helper()
	svc := newAttack92Svc()
	f := attack92Serve(t, svc, func(c *Config) { c.Token = attack96AccessToken })
	tc, br := attack92MustTunnel(t, f)
	if failFast {
		extra = append(extra, HeaderFailFast+": true")
	}
	text := attack92Head(xuid1, extra...) + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
	for _, l := range section {
		text += l + "\r\n"
	}
	text += "\r\n"
	resp, body, err := attack6Send(t, tc, br, text)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	return resp.StatusCode, body, svc.all()
}

// held: TestAttack96TrailerSecretsNeverReach: Fgrl- fields, Proxy-Authorization
// (the proxy's access token, Basic and Bearer) and the other hop-by-hop
// fields as request trailers, in any case spelling, with spaces around the
// names, repeated, announced twice, in two Trailer lines, or not announced
// and sent anyway: none reaches the service with its value, read ahead or
// streamed (fail fast); X-Ok, announced, reaches it as sent.
//
// Promise: proxy.go package doc: "The trailer fields a request's body
// announces (its Trailer header) reach the service as sent ..., but for
// those the proxy strips: its own, named with PolicyPrefix; the hop-by-hop
// ones, Proxy-Authorization among them".
func TestAttack96TrailerSecretsNeverReach(t *testing.T) {
	basic := "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("app:"+attack96AccessToken))
	cases := []struct {
		name     string
		announce []string
		section  []string
		okWanted bool
	}{
		{"case spellings", []string{"Trailer: fGRL-Secret, PROXY-AUTHORIZATION, X-Ok"},
			[]string{"FGRL-secret: FGRL-SECRET-VAL", strings.Replace(basic, "Proxy-Authorization", "proxy-authorization", 1), "X-Ok: ok"}, true},
		{"spaces in the announce", []string{"Trailer:   fgrl-max-wait  ,  Proxy-Authorization ,X-Ok  "},
			[]string{"Fgrl-Max-Wait:   FGRL-SECRET-VAL  ", "Proxy-Authorization:  Bearer " + attack96AccessToken, "X-Ok: ok"}, true},
		{"repeated", []string{"Trailer: Fgrl-Secret, Proxy-Authorization, X-Ok"},
			[]string{"Fgrl-Secret: FGRL-SECRET-VAL", "fgrl-secret: FGRL-SECRET-VAL-2", basic, "Proxy-Authorization: Bearer " + attack96AccessToken, "X-Ok: ok"}, true},
		{"two Trailer lines, announced twice", []string{"Trailer: X-Ok, fgrl-secret", "Trailer: FGRL-SECRET, Proxy-Authorization, proxy-authorization"},
			[]string{"Fgrl-Secret: FGRL-SECRET-VAL", basic, "X-Ok: ok"}, true},
		{"not announced, sent", []string{"Trailer: X-Ok"},
			[]string{"Fgrl-Secret: FGRL-SECRET-VAL", basic, "Proxy-Connection: HOPBYHOP-VAL", "Keep-Alive: HOPBYHOP-VAL", "X-Ok: ok"}, true},
		{"nothing announced, sent", nil,
			[]string{"Fgrl-Secret: FGRL-SECRET-VAL", basic, "X-Ok: ok"}, false},
		{"other hop-by-hop", []string{"Trailer: Keep-Alive, Upgrade, Te, Proxy-Connection, Proxy-Authenticate, Connection, X-Ok"},
			[]string{"Keep-Alive: HOPBYHOP-VAL", "Upgrade: HOPBYHOP-VAL", "TE: HOPBYHOP-VAL", "Proxy-Connection: HOPBYHOP-VAL", "Proxy-Authenticate: HOPBYHOP-VAL", "Connection: HOPBYHOP-VAL", "X-Ok: ok"}, true},
	}
	for _, c := range cases {
		for _, ff := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/failfast=%v", c.name, ff), func(t *testing.T) {
				status, body, posts := attack96H1Trailer(t, ff, append([]string(nil), c.announce...), c.section)
				if len(posts) != 1 {
					t.Fatalf("%d %q; the service got %d POSTs", status, body, len(posts))
				}
				t.Logf("%d; the service's trailer %q", status, posts[0].trailer)
				if seen := attack96Seen(posts[0], attack96Secrets); len(seen) > 0 {
					t.Errorf("the service got: %q", seen)
				}
				for k, v := range posts[0].trailer {
					if strings.HasPrefix(strings.ToLower(k), "fgrl-") && len(v) > 0 {
						t.Errorf("the service got the trailer %s: %q", k, v)
					}
				}
				if got := posts[0].trailer.Get("X-Ok"); c.okWanted && got != "ok" {
					t.Errorf("X-Ok reached the service as %q, want %q", got, "ok")
				}
			})
		}
	}
}

// TestAttack96TrailerConnectionNamedStripped: a field the request's Connection
// header names is hop-by-hop (RFC 9110 §7.6.1): the ReverseProxy strips
// it from the header; announced as a trailer (Connection: X-Hop, Trailer:
// X-Hop), it is one of "the hop-by-hop ones" the proxy strips.
//
// Promise: proxy.go package doc: "The trailer fields a request's body
// announces ... reach the service as sent ..., but for those the proxy
// strips: ... the hop-by-hop ones, Proxy-Authorization among them, and
// those the request's Connection header names"; policy.go stripTrailer:
// "those the request's Connection header ... names, hop-by-hop too (RFC
// 9110 §7.6.1), which the ReverseProxy strips from the header".
func TestAttack96TrailerConnectionNamedStripped(t *testing.T) {
	for _, ff := range []bool{false, true} {
		t.Run(fmt.Sprintf("failfast=%v", ff), func(t *testing.T) {
			status, _, posts := attack96H1Trailer(t, ff, []string{"Connection: X-Hop", "Trailer: X-Hop, X-Ok", "X-Hop: HEADER-HOP-VAL"},
				[]string{"X-Hop: HOPBYHOP-VAL", "X-Ok: ok"})
			if len(posts) != 1 {
				t.Fatalf("%d; the service got %d POSTs", status, len(posts))
			}
			if v := posts[0].header.Get("X-Hop"); v != "" {
				t.Logf("the header X-Hop reached the service too: %q", v)
			} else {
				t.Logf("the header X-Hop was stripped (hop-by-hop by Connection)")
			}
			if seen := attack96Seen(posts[0], []string{"HOPBYHOP-VAL"}); len(seen) > 0 {
				t.Errorf("a field named in Connection reached the service as a trailer: %q", seen)
			}
		})
	}
}

// TestAttack96TrailerAuthorizationSwap: a chunked POST of user A (its
// Authorization header) announces Authorization, Host and Cookie as
// trailers and sends user B's token, another host and a cookie there.
// The proxy budgets the call as user A; whatever reaches the service as a
// trailer is another user's credential on a call counted as A's. RFC 9110
// §6.5.1 forbids a sender to generate such trailers (authentication,
// routing); net/http's own HTTP/2 server resets a stream that sends them.
//
// Promise: proxy.go package doc: "The trailer fields a request's body
// announces ... reach the service as sent ..., but for those the proxy
// strips: ... those that cannot be trailers (RFC 9110 §6.5.1):
// Authorization, Cookie, Host, ..."; RFC 9110 §6.5.1: "A sender MUST NOT
// generate a trailer field unless the sender knows the corresponding
// header field name's definition permits the field to be sent in
// trailers." (the proxy sends the request on to the service).
func TestAttack96TrailerAuthorizationSwap(t *testing.T) {
	tokB := mock.Token(xuid2, title)
	for _, ff := range []bool{false, true} {
		t.Run(fmt.Sprintf("failfast=%v", ff), func(t *testing.T) {
			svc := newAttack92Svc()
			f := attack92Serve(t, svc, nil)
			tc, br := attack92MustTunnel(t, f)
			extra := []string{"Trailer: Authorization, Host, Cookie, X-Ok"}
			if ff {
				extra = append(extra, HeaderFailFast+": true")
			}
			resp, _, err := attack6Send(t, tc, br, attack92Head(xuid1, extra...)+"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"+
				"Authorization: "+tokB+"\r\nHost: evil.example\r\nCookie: session=SECRET-COOKIE\r\nX-Ok: ok\r\n\r\n")
			if err != nil {
				t.Fatal(err)
			}
			posts := svc.all()
			if len(posts) != 1 {
				t.Fatalf("%d; %d POSTs", resp.StatusCode, len(posts))
			}
			p := posts[0]
			t.Logf("%d; header user %q; the service's trailer: Authorization %d bytes, Host %q, Cookie %q, X-Ok %q",
				resp.StatusCode, p.user, len(p.trailer.Get("Authorization")), p.trailer.Get("Host"), p.trailer.Get("Cookie"), p.trailer.Get("X-Ok"))
			if a := p.trailer.Get("Authorization"); a != "" && a != p.header.Get("Authorization") {
				t.Errorf("the call went out with user A's Authorization header (budgeted as A: %q) and user B's token as a trailer", p.user)
			}
			if h := p.trailer.Get("Host"); h != "" {
				t.Errorf("a Host trailer %q reached the service", h)
			}
		})
	}
}

// held: TestAttack96TrailerFramingAnnouncedRefused: Content-Length,
// Transfer-Encoding or Trailer announced as trailers of a chunked HTTP/1
// body are refused before the call (net/http's 400): the service never
// gets such a call.
//
// Promise: RFC 9110 §6.5.1 (framing fields never in trailers) and the
// package doc's "the hop-by-hop ones" (Transfer-Encoding, Trailer).
func TestAttack96TrailerFramingAnnouncedRefused(t *testing.T) {
	for _, name := range []string{"Content-Length", "Transfer-Encoding", "trailer", "content-length, X-Ok"} {
		t.Run(name, func(t *testing.T) {
			status, _, posts := attack96H1Trailer(t, false, []string{"Trailer: " + name}, []string{"Content-Length: 9999", "Transfer-Encoding: identity"})
			t.Logf("%d; %d POSTs", status, len(posts))
			if len(posts) != 0 {
				t.Errorf("the service got %d POSTs whose trailers %s were announced: %q", len(posts), name, posts[0].trailer)
			}
			if status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", status)
			}
		})
	}
}

// attack96TrailerBody is a request body of n bytes that, unless known, hides
// its length (no Content-Length: over HTTP/2 a stream without one).
func attack96TrailerBody(n int, known bool) (io.Reader, int64) {
	r := io.Reader(strings.NewReader(strings.Repeat("a", n)))
	if !known {
		return struct{ io.Reader }{r}, -1
	}
	return r, int64(n)
}

// attack96H2Post sends a POST over HTTP/2 through the proxy with trailer tr
// (values set before: net/http's client sends them after the body).
func attack96H2Post(t *testing.T, f *fixture, xuid string, n int, known bool, tr http.Header, hdr ...string) (*http.Response, error) {
	t.Helper()
	body, cl := attack96TrailerBody(n, known)
	req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", body)
	req.ContentLength = cl
	req.Header.Set("Authorization", mock.Token(xuid, title))
	req.Header.Set("x-xbl-contract-version", "2")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	req.Trailer = tr
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("the client spoke %s, not HTTP/2", resp.Proto)
	}
	return resp, nil
}

// TestAttack96TrailerHTTP2: over HTTP/2, a POST with a trailer X-Ok: ok, its
// length given or not, held (2 bytes) or streamed (100 KB), sent on to an
// HTTP/1.1 or an HTTP/2 service: X-Ok reaches the service as sent.
// Broken when the length is given: to an HTTP/1.1 service the request goes
// with Content-Length, so net/http writes no trailer section (X-Ok lost,
// held or streamed); a body the proxy holds (up to 64 KiB, hold reads
// exactly Content-Length bytes and never reads to io.EOF, where net/http's
// HTTP/2 server fills Request.Trailer) reaches an HTTP/2 service with
// X-Ok's name and no value.
//
// Promise: proxy.go package doc: "The trailer fields a request's body
// announces (its Trailer header) reach the service as sent".
func TestAttack96TrailerHTTP2(t *testing.T) {
	for _, h2up := range []bool{false, true} {
		for _, known := range []bool{false, true} {
			for _, n := range []int{2, 100_000} {
				t.Run(fmt.Sprintf("upstream h2=%v/length known=%v/%d bytes", h2up, known, n), func(t *testing.T) {
					svc := newAttack92Svc()
					f := serve(t, withBase(upstreamProto(t, h2up, svc)))
					resp, err := attack96H2Post(t, f, xuid1, n, known, http.Header{"X-Ok": {"ok"}, "Fgrl-Secret": {"FGRL-SECRET-VAL"}})
					if err != nil {
						t.Fatal(err)
					}
					posts := svc.all()
					if len(posts) != 1 {
						t.Fatalf("%d; %d POSTs", resp.StatusCode, len(posts))
					}
					p := posts[0]
					t.Logf("%d; the service got %d bytes, Content-Length %q, trailer %q", resp.StatusCode, len(p.body), p.header.Get("Content-Length"), p.trailer)
					if got := p.trailer.Get("X-Ok"); got != "ok" || len(p.body) != n {
						t.Errorf("X-Ok reached the service as %q (body %d bytes of %d), want %q", got, len(p.body), n, "ok")
					}
					if seen := attack96Seen(p, attack96Secrets); len(seen) > 0 {
						t.Errorf("the service got: %q", seen)
					}
				})
			}
		}
	}
}

// attack96RetrySvc answers the first POST of each body 429 (Retry-After: 1)
// and the next 200, recording every attempt.
type attack96RetrySvc struct {
	mu    sync.Mutex
	seen  map[string]int
	posts []attack92Post
}

func (s *attack96RetrySvc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	s.mu.Lock()
	s.posts = append(s.posts, attack92Post{body: string(b), err: err, trailer: r.Trailer.Clone(), header: r.Header.Clone()})
	s.seen[string(b)]++
	first := s.seen[string(b)] == 1
	s.mu.Unlock()
	if first {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	io.WriteString(w, `{"profileUsers":[]}`)
}

// TestAttack96TrailerRetried: over HTTP/2 with an HTTP/2 service, 8 calls at
// once, each a held body of its own (its length given) and a trailer
// X-Call naming it; the service answers each first attempt 429
// (Retry-After: 1) and the retry 200. Every attempt carries its own
// call's trailer, never another's, never without it (run under -race).
// Broken: no attempt carries the value (the held body is read to its
// length, never to io.EOF, so its trailer values never come); no race and
// no value from another call was seen.
//
// Promise: proxy.go package doc: "The trailer fields a request's body
// announces (its Trailer header) reach the service as sent".
func TestAttack96TrailerRetried(t *testing.T) {
	svc := &attack96RetrySvc{seen: map[string]int{}}
	f := serve(t, withBase(upstreamProto(t, true, svc)))
	const calls = 8
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			body := fmt.Sprintf("call-%02d", i)
			req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", strings.NewReader(body))
			req.Header.Set("Authorization", mock.Token(fmt.Sprintf("25332747900000%02d", i), title))
			req.Header.Set("x-xbl-contract-version", "2")
			req.Header.Set(HeaderMaxWait, "30s")
			req.Trailer = http.Header{"X-Call": {body}, "Fgrl-Secret": {"FGRL-SECRET-VAL"}}
			resp, err := f.client.Do(req)
			if err != nil {
				t.Errorf("%s: %v", body, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s: %d", body, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.posts) != 2*calls {
		t.Errorf("the service got %d attempts, want %d", len(svc.posts), 2*calls)
	}
	for _, p := range svc.posts {
		if got := p.trailer.Get("X-Call"); got != p.body {
			t.Errorf("an attempt of %s carried the trailer X-Call %q", p.body, got)
		}
		if seen := attack96Seen(p, attack96Secrets); len(seen) > 0 {
			t.Errorf("the service got: %q", seen)
		}
	}
}

// held: TestAttack96TrailerHugeHTTP1: a chunked HTTP/1 body whose trailer
// section is past net/http's 4 KiB (3,000 fields; one 64 KiB value): the
// call is answered 400 within seconds, the service never gets it whole
// with that trailer.
//
// Promise: RELIABILITY.md: a streamed request body that is malformed is
// answered "400 'the request's body did not arrive whole'".
func TestAttack96TrailerHugeHTTP1(t *testing.T) {
	many := make([]string, 3000)
	names := make([]string, 3000)
	for i := range many {
		names[i] = fmt.Sprintf("X-T%d", i)
		many[i] = names[i] + ": v"
	}
	cases := map[string][2][]string{
		"3000 fields":  {{"Trailer: " + strings.Join(names, ",")}, many},
		"64 KiB value": {{"Trailer: X-Big"}, {"X-Big: " + strings.Repeat("b", 64<<10)}},
	}
	for name, c := range cases {
		for _, ff := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/failfast=%v", name, ff), func(t *testing.T) {
				start := time.Now()
				status, body, posts := attack96H1Trailer(t, ff, c[0], c[1])
				t.Logf("%d %q after %v; %d POSTs", status, strings.TrimSpace(body), time.Since(start).Round(time.Millisecond), len(posts))
				if status != http.StatusBadRequest {
					t.Errorf("status %d, want 400", status)
				}
				for _, p := range posts {
					if p.err == nil && len(p.trailer) > 0 && p.trailer.Get(strings.SplitN(c[1][0], ":", 2)[0]) != "" {
						t.Errorf("the service got the call whole with its huge trailer")
					}
				}
			})
		}
	}
}

// held: TestAttack96TrailerHugeHTTP2: over HTTP/2, 2,000 trailer fields and
// one of 100 KB or 600 KB (within net/http's 1 MB header list): the call
// ends within seconds, whatever it ends with, and the proxy keeps serving.
//
// Promise: proxy.go Config/package doc: "A call ... ends when the
// application gives up"; the proxy keeps no request body after a call.
func TestAttack96TrailerHugeHTTP2(t *testing.T) {
	for _, big := range []int{100_000, 600_000} {
		for _, h2up := range []bool{false, true} {
			t.Run(fmt.Sprintf("X-Big %d/upstream h2=%v", big, h2up), func(t *testing.T) {
				svc := newAttack92Svc()
				f := serve(t, withBase(upstreamProto(t, h2up, svc)))
				tr := http.Header{"X-Big": {strings.Repeat("b", big)}}
				for i := range 2000 {
					tr[fmt.Sprintf("X-T%d", i)] = []string{"v"}
				}
				start := time.Now()
				done := make(chan struct{})
				var resp *http.Response
				var err error
				go func() {
					defer close(done)
					resp, err = attack96H2Post(t, f, xuid1, 100, false, tr)
				}()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the call with huge trailers did not end within 30 s")
				}
				if err != nil {
					t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
				} else {
					t.Logf("after %v: %d", time.Since(start).Round(time.Millisecond), resp.StatusCode)
				}
				for _, p := range svc.all() {
					t.Logf("the service got %d bytes, %d trailer fields, X-Big %d bytes, err %v", len(p.body), len(p.trailer), len(p.trailer.Get("X-Big")), p.err)
				}
				if r, err := attack96H2Post(t, f, xuid2, 2, true, nil); err != nil || r.StatusCode != 200 {
					t.Errorf("the next call: %v %v", r, err)
				}
			})
		}
	}
}

// TestAttack96TrailerBodyBroken: a chunked body that announced X-Ok and then
// breaks in its trailer section is answered 400 "the request's body did
// not arrive whole", and the service never gets the call whole with X-Ok
// filled. Held for a malformed trailer line (cut=false). Broken when the
// application half-closes its side (TLS close_notify) half way through
// the trailers (cut=true): net/http takes the read EOF for the application
// gone, the call ends "cancelled", the handler writes nothing, and
// net/http answers the application, still reading, 200 with an empty body:
// a success for a call the service never got (read ahead) or got broken
// (fail fast).
//
// Promise: RELIABILITY.md: "a streamed request body in malformed chunked
// encoding | ... | 400 \"the request's body did not arrive whole\"";
// forward.go failed(): "a body that did not arrive whole 400".
func TestAttack96TrailerBodyBroken(t *testing.T) {
	for _, cut := range []bool{false, true} {
		for _, ff := range []bool{false, true} {
			t.Run(fmt.Sprintf("cut=%v/failfast=%v", cut, ff), func(t *testing.T) {
				svc := newAttack92Svc()
				f := attack92Serve(t, svc, nil)
				tc, br := attack92MustTunnel(t, f)
				extra := []string{"Trailer: X-Ok, X-Two"}
				if ff {
					extra = append(extra, HeaderFailFast+": true")
				}
				text := attack92Head(xuid1, extra...) + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Ok: ok\r\n"
				if !cut {
					text += "this line has no colon\r\nX-Two: two\r\n\r\n"
				}
				tc.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.WriteString(tc, text); err != nil {
					t.Fatal(err)
				}
				if cut {
					tc.CloseWrite()
				}
				resp, body, err := reAnswer(t, tc, br, 5*time.Second)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
				posts := svc.all()
				t.Logf("%d %q; %d POSTs; stats %+v", resp.StatusCode, strings.TrimSpace(body), len(posts), f.srv.Stats())
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "did not arrive whole") {
					t.Errorf("%d %q, want 400 the request's body did not arrive whole", resp.StatusCode, body)
				}
				for _, p := range posts {
					t.Logf("the service: err %v, trailer %q", p.err, p.trailer)
					if p.err == nil {
						t.Errorf("the service got the call whole (trailer %q)", p.trailer)
					}
				}
			})
		}
	}
}
