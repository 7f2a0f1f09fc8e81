package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// attack5Trickled writes head (a request's line and header, with the blank
// line) on conn, then trickles its body (3 bytes every 100 ms, chunked or
// raw) until the test stops it. It returns the answer read by deadline, or
// the read's error, and when it came; the trickle goes on until the
// returned stop is called.
func attack5Trickled(t *testing.T, conn net.Conn, br *bufio.Reader, head string, chunked bool, deadline time.Duration) (resp *http.Response, body string, took time.Duration, stop func(), err error) {
	t.Helper()
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for time.Since(start) < deadline+2*time.Second {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			part := "[1,"
			if chunked {
				part = "3\r\n[1,\r\n"
			}
			conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := io.WriteString(conn, part); err != nil {
				return
			}
		}
	}()
	stop = func() { close(quit); <-done }
	conn.SetReadDeadline(start.Add(deadline))
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		return nil, "", time.Since(start), stop, err
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), time.Since(start), stop, nil
}

// TestAttack5ServiceEarlyAnswerStreamedBodyEnds: the fix ends a refused
// call's streamed body at once, but a call can end before its streamed
// body is read in another way: the service answers without reading it (a
// 401 for a token it refuses; its own 429 with Retry-After, which reaches
// the application raw, as xblcall proxy sets Raw429). The application
// trickles the body (3 bytes every 100 ms). The call ended in time on the
// proxy's side (its log says served, ~100 ms), so its MaxCallTime cut is
// stopped, and net/http then reads up to 256 KiB of the body before it
// writes the answer, with no deadline: no answer comes, the connection and
// its goroutine stay as long as the body trickles (at 30 bytes a second,
// 256 KiB is 2.4 hours), and once it stops the answer is lost anyway (its
// write deadline, MaxCallTime + 1 s, has passed).
//
// Promise: proxy.go, Config.MaxCallTime: "MaxCallTime bounds a call from its
// arrival to the end of its answer, waits included, whatever the
// application's own timeout: its body's reads end then, and a call still
// under way is answered 504 (within a second more)."
func TestAttack5ServiceEarlyAnswerStreamedBodyEnds(t *testing.T) {
	const maxCall = 500 * time.Millisecond
	const margin = answerGrace + time.Second // as TestAttack4StreamedBodyRefusedLocallyEnds: the answer's grace, the server's close
	service429 := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The service refuses at once, reading nothing (and, not to wait
		// for the body itself, closes its side).
		w.Header().Set("Retry-After", "30")
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"limitType":"Rate","maxRequests":10,"periodInSeconds":15}`)
	}))
	cases := []struct {
		name     string
		base     http.RoundTripper // nil: the mock
		auth     string
		inTunnel bool
		framing  string
		chunked  bool
	}{
		{"mock 401/chunked", nil, "XBL3.0 x=1;bogus", false, "Transfer-Encoding: chunked\r\n", true},
		{"mock 401/chunked in tunnel", nil, "XBL3.0 x=1;bogus", true, "Transfer-Encoding: chunked\r\n", true},
		{"mock 401/length 128 KiB", nil, "XBL3.0 x=1;bogus", false, fmt.Sprintf("Content-Length: %d\r\n", 2*maxRewindBody), false},
		{"service 429 raw/chunked", service429, mock.Token(xuid1, title), false, "Transfer-Encoding: chunked\r\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := serve(t, func(c *Config) {
				if tc.base != nil {
					withBase(tc.base)(c) // Raw429, as xblcall proxy
				}
				c.MaxCallTime = maxCall
			})
			conn, br, pre := callConn(t, f, tc.inTunnel)
			head := "POST " + pre + "/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + tc.auth +
				"\r\nx-xbl-contract-version: 2\r\nContent-Type: application/json\r\n" + tc.framing + "\r\n"
			resp, body, took, stop, err := attack5Trickled(t, conn, br, head, tc.chunked, maxCall+margin+time.Second)
			defer stop()
			if err != nil {
				t.Fatalf("no answer %v after the call began (MaxCallTime %v), the connection still open: %v", took.Round(time.Millisecond), maxCall, err)
			}
			t.Logf("answer %d after %v: %.80q", resp.StatusCode, took.Round(time.Millisecond), body)
			if took > maxCall+margin {
				t.Errorf("answered %v after the call began: later than MaxCallTime %v plus %v", took.Round(time.Millisecond), maxCall, margin)
			}
		})
	}
}

// TestAttack5RefusedWholeStreamedBodyKeepsConnection: a call refused locally
// whose streamed body (chunked, or a Content-Length over maxRewindBody)
// came whole, in the same write as the next request. The fix's deadline
// lets net/http take only what its 4 KiB reader holds, not what the
// socket holds: a body of 20 KB or 100 KB that is all there is taken for
// one that is not, so the refusal closes the connection and the next
// request, sent already, is lost (the connection reset). Before the fix
// both were answered on one connection.
//
// Promise: forward.go, failed: "Now it takes only what the connection has
// buffered: all that is left, and the connection stays for the next
// request; not, and it closes after the answer"; commit 8c2978b: "a body
// not all there closes the connection; one that came whole keeps it";
// forward.go (forward): "A call that ended in time leaves its connection
// alone".
func TestAttack5RefusedWholeStreamedBodyKeepsConnection(t *testing.T) {
	f := serve(t, func(c *Config) { c.MaxCallTime = 500 * time.Millisecond })
	auth := mock.Token(xuid1, title)
	items := strings.Repeat("1,", 10000)
	bodies := []struct{ name, framed string }{
		{"chunked 20 KB", fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n[%s1]\r\n0\r\n\r\n", len(items)+3, items)},
		{"length 100 KB", fmt.Sprintf("Content-Length: %d\r\n\r\n[%s1]", len(items)*5+3, strings.Repeat(items, 5))},
	}
	for _, inTunnel := range []bool{false, true} {
		for _, b := range bodies {
			t.Run(fmt.Sprintf("tunnel=%v/%s", inTunnel, b.name), func(t *testing.T) {
				spendBudget(t, f, xuid1)
				conn, br, pre := callConn(t, f, inTunnel)
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				head := " HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth + "\r\n" + HeaderFailFast + ": true\r\n"
				io.WriteString(conn, "POST "+pre+"/users/batch/profile/settings"+head+"x-xbl-contract-version: 2\r\nContent-Type: application/json\r\n"+b.framed+
					"GET "+pre+"/users/me/profile/settings?settings=Gamertag"+head+"x-xbl-contract-version: 3\r\n\r\n")
				resp := readLocalRefusal(t, br)
				if resp.Close {
					t.Errorf("the refusal of a call whose streamed body came whole closes its connection (Connection: close)")
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("the next request, sent with the whole body, got no answer: %v", err)
				}
				io.Copy(io.Discard, resp.Body)
				t.Logf("next request: %d", resp.StatusCode)
			})
		}
	}
}

// held: HTTP/2 inside a tunnel: a stream refused locally whose body
// trickles (an io.Pipe, 3 bytes every 100 ms) is answered at once, and the
// next request on the same connection is served while it trickles: the
// refused stream holds neither the connection nor other streams.
//
// Promise: proxy.go, package doc: "A call the transport refuses locally is
// answered as the service would answer it: 429 with Retry-After ...";
// Config.MaxCallTime: "its body's reads end then".
func TestAttack5RefusedH2StreamTrickledHoldsNothing(t *testing.T) {
	f := serve(t, func(c *Config) { c.MaxCallTime = 500 * time.Millisecond })
	spendBudget(t, f, xuid1)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		for range 40 {
			time.Sleep(100 * time.Millisecond)
			if _, err := io.WriteString(pw, "[1,"); err != nil {
				return
			}
		}
	}()
	req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", pr)
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	req.Header.Set("x-xbl-contract-version", "2")
	req.Header.Set(HeaderFailFast, "true")
	start := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	t.Logf("%s %d %s=%s after %v", resp.Proto, resp.StatusCode, HeaderRefused, resp.Header.Get(HeaderRefused), took.Round(time.Millisecond))
	if resp.ProtoMajor != 2 {
		t.Skip("no h2 in the tunnel")
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || took > time.Second {
		t.Errorf("refused h2 stream: %d Retry-After=%q after %v (%.80q); want a 429 with Retry-After at once", resp.StatusCode, resp.Header.Get("Retry-After"), took, b)
	}
	reused := false
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	r2, body, err := get(t, f.client, ctx, profileURL, xuid2)
	if err != nil || r2.StatusCode != 200 || !strings.Contains(body, xuid2) {
		t.Fatalf("the next request on the connection: %v %v %.80q", r2, err, body)
	}
	if !reused {
		t.Errorf("the next request did not reuse the h2 connection")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the next request took until %v", d)
	}
}

// held: a cached Retry-After whose status is not 429 (the service's 503)
// refuses the next call of that user and service locally through
// plain(w, nil, ...): with a trickled chunked body, the refusal comes at
// once, with Retry-After and Fgrl-Refused: local, and the connection ends;
// neither it nor the log holds the token.
//
// Promise: refuse.go: "refuse answers a call the transport refused as the
// service answers one it throttles, and returns the status: te's (429, or
// the status a cached Retry-After fails calls fast with), Retry-After te's
// wait ... A local refusal is marked with HeaderRefused: local."; proxy.go:
// "no token reaches its log, status or errors".
func TestAttack5CachedNon429RetryAfterTrickledEnds(t *testing.T) {
	const maxCall = 500 * time.Millisecond
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	logger, logged := pxAtk2Logged()
	f := serve(t, func(c *Config) {
		withBase(base)(c)
		c.MaxCallTime = maxCall
		c.Logger = logger
	})
	auth, tok := pxAtk2Tokens(xuid1)
	if r, _, err := get(t, f.client, t.Context(), profileURL, xuid1, HeaderFailFast, "true"); err != nil || r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("first call: %v %v", r, err)
	}
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			conn, br, pre := callConn(t, f, inTunnel)
			head := "POST " + pre + "/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth +
				"\r\nx-xbl-contract-version: 2\r\n" + HeaderFailFast + ": true\r\nTransfer-Encoding: chunked\r\n\r\n"
			resp, body, took, stop, err := attack5Trickled(t, conn, br, head, true, 3*time.Second)
			defer stop()
			if err != nil {
				t.Fatalf("no answer after %v: %v", took, err)
			}
			t.Logf("answer %d after %v: %q", resp.StatusCode, took.Round(time.Millisecond), body)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get(HeaderRefused) != "local" || took > time.Second {
				t.Errorf("want a 503 refused locally with Retry-After at once; got %d Retry-After=%q %s=%q after %v",
					resp.StatusCode, resp.Header.Get("Retry-After"), HeaderRefused, resp.Header.Get(HeaderRefused), took)
			}
			if strings.Contains(body, tok) || strings.Contains(fmt.Sprint(resp.Header), tok) {
				t.Errorf("the answer holds the token")
			}
			conn.SetReadDeadline(time.Now().Add(maxCall + answerGrace + time.Second))
			if _, err := io.Copy(io.Discard, br); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("the connection of the refused trickled call is still open")
				}
			}
		})
	}
	if strings.Contains(logged.String(), tok) {
		t.Errorf("the log holds the token")
	}
}

// held: Expect: 100-continue with a chunked body, refused locally: no
// "100 Continue" is sent (the body is not asked for), the 429 comes at
// once and the connection ends.
//
// Promise: Config.MaxCallTime: "its body's reads end then".
func TestAttack5ExpectContinueRefused(t *testing.T) {
	f := serve(t, func(c *Config) { c.MaxCallTime = 500 * time.Millisecond })
	spendBudget(t, f, xuid1)
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			conn, br, pre := callConn(t, f, inTunnel)
			head := "POST " + pre + "/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + mock.Token(xuid1, title) +
				"\r\n" + HeaderFailFast + ": true\r\nExpect: 100-continue\r\nx-xbl-contract-version: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
			resp, _, took, stop, err := attack5Trickled(t, conn, br, head, true, 3*time.Second)
			defer stop()
			if err != nil || resp.StatusCode != http.StatusTooManyRequests || took > time.Second {
				t.Fatalf("want a 429 at once: %v %v after %v", resp, err, took)
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			// It ends with EOF, or a reset (the proxy closed with the
			// trickle's bytes unread); only a timeout is a connection left open.
			if _, err := io.Copy(io.Discard, br); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("the connection did not end: %v", err)
				}
			}
		})
	}
}

// held: pipelining after a refused call: a chunked body whose chunk holds
// a request's text, with the next request in the same write: the next
// request is the one answered (xuid2's profile), the text inside the body
// is never a request; and a body whose last chunk is followed by a
// "trailer" that is a request line is never served (nothing is sent).
//
// Promise: the proxy never forwards a body it was not sent whole as if
// whole, nor a request it was not sent (package doc: "a request whose Host
// is another, is refused"); forward.go: "the connection stays for the
// next request".
func TestAttack5PipelinedAfterRefusedNoSmuggling(t *testing.T) {
	f := serve(t, func(c *Config) { c.MaxCallTime = 500 * time.Millisecond })
	spendBudget(t, f, xuid1)
	head := func(xuid string) string {
		return " HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + mock.Token(xuid, title) + "\r\n" + HeaderFailFast + ": true\r\n"
	}
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			conn, br, pre := callConn(t, f, inTunnel)
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			inner := "GET " + pre + "/users/me/profile/settings?settings=Gamertag" + head(xuid1) + "x-xbl-contract-version: 3\r\n\r\n"
			before := f.tr.Stats().Attempts
			io.WriteString(conn, "POST "+pre+"/users/batch/profile/settings"+head(xuid1)+"x-xbl-contract-version: 2\r\nTransfer-Encoding: chunked\r\n\r\n"+
				fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(inner), inner)+
				"GET "+pre+"/users/me/profile/settings?settings=Gamertag"+head(xuid2)+"x-xbl-contract-version: 3\r\n\r\n")
			var got []string
			for i := range 3 {
				if i == 2 { // no third answer: wait a little for one
					conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					break
				}
				b, _ := io.ReadAll(resp.Body)
				got = append(got, fmt.Sprintf("%d %.60s", resp.StatusCode, b))
			}
			t.Logf("answers: %q", got)
			if len(got) != 2 || !strings.HasPrefix(got[0], "429") || !strings.Contains(got[1], xuid2) {
				t.Errorf("answers %q; want the 429, then xuid2's profile, and no third", got)
			}
			if n := f.tr.Stats().Attempts - before; n != 1 {
				t.Errorf("%d calls sent, want 1 (xuid2's)", n)
			}

			conn2, br2, _ := callConn(t, f, inTunnel)
			conn2.SetDeadline(time.Now().Add(time.Second)) // in absolute form the request line (it has a colon) is read as a trailer line: swallowed, the connection kept
			before = f.tr.Stats().Attempts
			io.WriteString(conn2, "POST "+pre+"/users/batch/profile/settings"+head(xuid1)+"x-xbl-contract-version: 2\r\nTransfer-Encoding: chunked\r\n\r\n"+
				"5\r\n[1,2]\r\n0\r\n"+"GET "+pre+"/users/me/profile/settings?settings=Gamertag"+head(xuid2)+"x-xbl-contract-version: 3\r\n\r\n")
			n := 0
			for {
				resp, err := http.ReadResponse(br2, nil)
				if err != nil {
					t.Logf("trailer case: %d answers, then %v", n, err)
					break
				}
				io.Copy(io.Discard, resp.Body)
				n++
			}
			if n > 1 || f.tr.Stats().Attempts != before {
				t.Errorf("a request inside a trailer was served: %d answers, %d calls sent", n, f.tr.Stats().Attempts-before)
			}
		})
	}
}

// held: the fix leaves alone a call whose streamed body was read whole: a
// chunked body the service reads, then refuses (429 with Retry-After,
// Raw429 off: a *transport.ThrottleError after the body came to EOF, when
// net/http's background read has started and the deadline fails it): the
// 429 comes with Retry-After, and the connection serves the next request.
//
// Promise: outsider_test.go TestKeepAliveAfterForward / forward.go: "A call
// that ended in time leaves its connection alone".
func TestAttack5Service429AfterWholeBodyKeepsConnection(t *testing.T) {
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{"ok":1}`)
	}))
	f := serve(t, func(c *Config) {
		c.Transport = &transport.Transport{Base: base, TitleID: title}
		c.MaxCallTime = 2 * time.Second
	})
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			conn, br, pre := callConn(t, f, inTunnel)
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			head := " HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + mock.Token(xuid1, title) + "\r\n"
			io.WriteString(conn, "POST "+pre+"/users/batch/profile/settings"+head+"x-xbl-contract-version: 2\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[1,2]\r\n0\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Close {
				t.Errorf("service 429: %d Retry-After=%q close=%v", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
			}
			time.Sleep(100 * time.Millisecond)
			io.WriteString(conn, "GET "+pre+"/users/me/profile/settings?settings=Gamertag"+head+"x-xbl-contract-version: 3\r\n\r\n")
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the connection did not serve its next request: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			t.Logf("next: %d", resp.StatusCode)
		})
	}
}
