package proxy

// The breaks a fourth outside attack on the proxy found (2026-12-04), each
// a test that failed before its fix.

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// readAnswerWithin reads an HTTP answer on c, waiting at most d: its
// status, or that the connection closed, or that nothing came.
func readAnswerWithin(c net.Conn, d time.Duration) (status int, closed, timedOut bool) {
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, false, true
		}
		return 0, true, false
	}
	resp.Body.Close()
	return resp.StatusCode, false, false
}

// TestBodyNeverSentEndsAtMaxCallTime: Config.MaxCallTime "bounds a call
// from its arrival to the end of its answer". A client that announces a
// small body (held for rewinding) or a chunked one (streamed) and never
// sends the rest has its call ended at MaxCallTime; before, a held body's
// read, which the call's context cannot stop, waited for ever, and a
// streamed one's answer waited for the body.
func TestBodyNeverSentEndsAtMaxCallTime(t *testing.T) {
	const maxCall = 500 * time.Millisecond
	f := serve(t, func(c *Config) { c.MaxCallTime = maxCall })
	tok := mock.Token(xuid1, title)
	for _, tc := range []struct{ name, head, part string }{
		{"held (Content-Length 100, 13 sent)", "Content-Length: 100\r\n", `{"userIds": [`},
		{"streamed (chunked, one chunk sent)", "Transfer-Encoding: chunked\r\n", "d\r\n" + `{"userIds": [` + "\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, f.addr)
			io.WriteString(c, "POST https://profile.xboxlive.com/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
				"Authorization: "+tok+"\r\nContent-Type: application/json\r\n"+tc.head+"\r\n"+tc.part)
			start := time.Now()
			if _, _, timedOut := readAnswerWithin(c, 5*time.Second); timedOut {
				t.Errorf("a call whose body never arrives was still open %v after it began (MaxCallTime %v)",
					time.Since(start).Round(time.Millisecond), maxCall)
			}
		})
	}
}

// TestTrickledBodyEndsAtMaxCallTime: with the connection bounds xblcall
// proxy uses (mock.ConnLimits.Apply), a body that comes one byte at a time,
// each within the body timeout, still ends at MaxCallTime.
func TestTrickledBodyEndsAtMaxCallTime(t *testing.T) {
	const maxCall = 500 * time.Millisecond
	f := serve(t, func(c *Config) {
		c.MaxCallTime = maxCall
		c.ConfigureServer = mock.ConnLimits{BodyTimeout: 2 * time.Second}.Apply
	})
	tok := mock.Token(xuid1, title)
	for _, tc := range []struct{ name, head string }{
		{"held (Content-Length 100)", "Content-Length: 100\r\n"},
		{"streamed (Content-Length 1 MiB)", "Content-Length: 1048576\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, f.addr)
			io.WriteString(c, "POST https://profile.xboxlive.com/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
				"Authorization: "+tok+"\r\nContent-Type: application/json\r\n"+tc.head+"\r\n"+`{"userIds": [`)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				tick := time.NewTicker(200 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if _, err := c.Write([]byte(" ")); err != nil { // JSON whitespace: the body stays valid
							return
						}
					}
				}
			}()
			start := time.Now()
			_, _, timedOut := readAnswerWithin(c, 5*time.Second)
			if took := time.Since(start); timedOut || took > 4*maxCall {
				t.Errorf("a trickled body held its call %v (still open: %v); MaxCallTime is %v", took.Round(time.Millisecond), timedOut, maxCall)
			}
		})
	}
}

// TestTokenInUserhashPlaceNotShown: the package promises that no token
// reaches its log or status, and Status names users by userhash. A client
// that puts its token before the ';' (where the userhash goes) must not
// see it in the log or the status API; before, both showed it as the user.
func TestTokenInUserhashPlaceNotShown(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := serve(t, func(c *Config) { c.Logger = logger })
	const secret = "eyJlbmMiOiJBMTI4Q0JDK0hTMjU2IiwiYWxnIjoiUlNBLU9BRVAiTOKENSECRET"
	if _, _, err := get(t, f.client, t.Context(), profileURL, xuid1, "Authorization", "XBL3.0 x="+secret+";x"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the proxy's log holds the token sent in the userhash's place:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `user="`+notUserhash+`"`) {
		t.Errorf("the log line does not say the user was no userhash:\n%s", logs.String())
	}
	_, body := rawRequest(t, f.addr, "GET /_fgrl/api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if strings.Contains(body, secret) {
		t.Errorf("/_fgrl/api/status holds the token sent in the userhash's place: %.300s", body)
	}
}

// TestKeysBoundedInBytes: the key table the status is made from is bounded
// in bytes: 4,096 calls with made-up 16 KiB userhashes (xblauth.Parse takes
// up to 16 KiB before the ';') held 64 MiB in it before, and the status
// named a user by 16,004 bytes.
func TestKeysBoundedInBytes(t *testing.T) {
	ok := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		rec.WriteHeader(200)
		return rec.Result(), nil
	})
	s := inProcess(t, ok, nil)
	pad := strings.Repeat("9", 16000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range maxTracked {
		req := httptest.NewRequestWithContext(context.Background(), "GET", profileURL, nil)
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Authorization", "XBL3.0 x="+strconv.Itoa(i)+pad+";x")
		req.Header.Set(HeaderFailFast, "true")
		s.serveHTTP(httptest.NewRecorder(), req)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB after %d calls with made-up 16 KiB userhashes", grown>>20, maxTracked)
	}
	for _, k := range s.Status().Keys {
		if len(k.User) > 20 {
			t.Errorf("Status names a user by a %d-byte 'userhash'", len(k.User))
			break
		}
	}
	runtime.KeepAlive(s)
}

// TestForgedUserhashSpendsNoOnesBudget: a caller that knows another user's
// userhash (the status page lists them to every loopback peer) sends calls
// with it and a made-up token; the service refuses each 401, and the real
// user's first call must still go: before, it was refused locally (429,
// Fgrl-Refused: local).
func TestForgedUserhashSpendsNoOnesBudget(t *testing.T) {
	f := serve(t, nil)
	forged := "XBL3.0 x=" + mock.UserHash(xuid2) + ";forged-token"
	rs := burst(t, f.client, 12, profileURL, xuid1, "Authorization", forged, HeaderFailFast, "true")
	// Sent at once, the twelve book their slots before any 401 comes back,
	// so the budget may refuse two; the slots of those answered 401 go back.
	if got, _ := statuses(rs); got[http.StatusUnauthorized]+got[http.StatusTooManyRequests] != 12 || got[http.StatusUnauthorized] < 10 {
		t.Fatalf("the forged calls got %v, want 401s (and 429s for those past the burst)", got)
	}
	resp, _, err := get(t, f.client, t.Context(), profileURL, xuid2, HeaderFailFast, "true")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("user %s's first call got %d (%s: %q) after another caller's forged calls with their userhash, want 200",
			xuid2, resp.StatusCode, HeaderRefused, resp.Header.Get(HeaderRefused))
	}
}

// TestTunnelDialRefusesSpecialRanges: the default Dial is no way into a
// network's own services: carrier-grade NAT's shared space (RFC 6598;
// cloud metadata at 100.100.100.200), the benchmarking range (local
// fake-IP resolvers), NAT64 and the other special-purpose ranges
// netip's checks leave out are refused; public addresses are not.
func TestTunnelDialRefusesSpecialRanges(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"100.100.100.200", false}, {"100.64.0.1", false}, {"198.18.0.1", false}, {"198.19.255.255", false},
		{"0.1.2.3", false}, {"192.0.0.8", false}, {"240.0.0.1", false}, {"255.255.255.255", false},
		{"64:ff9b::a00:1", false}, {"::a00:1", false}, {"fec0::1", false}, {"100::1", false},
		{"127.0.0.1", false}, {"10.0.0.1", false}, {"169.254.169.254", false}, {"fd00::1", false},
		{"100.63.255.255", true}, {"100.128.0.0", true}, {"198.17.255.255", true}, {"198.20.0.0", true},
		{"8.8.8.8", true}, {"2001:4860:4860::8888", true},
		// a second attack: 6to4 of a private or loopback address, Teredo,
		// the IPv4-translated form
		{"2002:a00:1::1", false}, {"2002:7f00:1::1", false}, {"2002:a9fe:a9fe::1", false}, {"2002:6464:64c8::1", false},
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", false}, {"::ffff:0:a00:1", false}, {"::ffff:0:7f00:1", false},
		{"2002:808:808::1", true},
		// a third attack's probes (they held): 6to4 of 0.0.0.0, CGNAT and
		// 192.168, IPv4-mapped forms whether or not the caller unmaps
		// them, local-use NAT64, the IPv4-compatible form
		{"2002:0000:0000::1", false}, {"2002:6464:c8c8::1", false}, {"2002:c0a8:0101::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:100.100.100.200", false}, {"::ffff:0:a9fe:a9fe", false},
		{"64:ff9b::7f00:1", false}, {"64:ff9b:1:ffff::1", false}, {"::127.0.0.1", false}, {"::1", false},
		{"fc00::1", false}, {"fe80::1", false}, {"192.0.0.170", false},
		{"2606:4700:4700::1111", true}, {"2620:fe::fe", true}, {"::ffff:8.8.8.8", true},
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := public(a); got != tc.want {
			t.Errorf("public(%s) = %v, want %v", tc.addr, got, tc.want)
		}
		if got := public(a.Unmap()); got != tc.want {
			t.Errorf("public(%s unmapped) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestStalledUploadsLeaveOthersTheirRetries: the proxy holds small bodies
// so that a call can be retried, within maxHeldBodies for all callers
// together. It counted a body's bytes from its Content-Length, before any
// came: 1,024 bodies of 64 KiB announced and never sent took the whole
// reserve, so another user's small POST was streamed, sent once, and its
// retryable 503 reached them. Bytes are now counted as they arrive.
func TestStalledUploadsLeaveOthersTheirRetries(t *testing.T) {
	attempts := map[string]int{}
	var mu sync.Mutex
	flaky := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		attempts[r.Header.Get("Authorization")]++
		n := attempts[r.Header.Get("Authorization")]
		mu.Unlock()
		rec := httptest.NewRecorder()
		if n == 1 {
			rec.WriteHeader(503)
		}
		return rec.Result(), nil
	})
	s := inProcess(t, flaky, nil)
	const url = "https://profile.xboxlive.com/users/batch/profile/settings"
	const stalled = maxHeldBodies / maxRewindBody
	var writers []*io.PipeWriter
	var wg sync.WaitGroup
	defer func() {
		for _, w := range writers {
			w.CloseWithError(errors.New("attacker gone"))
		}
		wg.Wait()
	}()
	for range stalled {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req := httptest.NewRequestWithContext(context.Background(), "POST", url, pr)
		req.ContentLength = maxRewindBody
		req.RemoteAddr = "127.0.0.1:40001"
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		wg.Go(func() { s.serveHTTP(httptest.NewRecorder(), req) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.held.n.Load() < stalled*holdStep && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := s.held.n.Load(); n > stalled*holdStep {
		t.Errorf("%d bodies announced and never sent hold %d KiB of the reserve, want at most %d KiB", stalled, n>>10, stalled*holdStep>>10)
	}
	rec := send(s, context.Background(), "POST", url, xuid2, strings.NewReader(`{"userIds":["1"],"settings":["Gamertag"]}`))
	mu.Lock()
	sent := attempts[mock.Token(xuid2, title)]
	mu.Unlock()
	if rec.Code != 200 || sent != 2 {
		t.Errorf("user %s's small POST got %d, sent %d time(s), want 200 after a retry: another caller's stalled uploads (%d KiB counted) took the reserve",
			xuid2, rec.Code, sent, s.held.n.Load()>>10)
	}
}

// TestHeldBodyOverTheReserveSentWhole: when the reserve runs out while a
// body is being held, what came is sent ahead of the rest, streamed: the
// service gets the whole body once.
func TestHeldBodyOverTheReserveSentWhole(t *testing.T) {
	var got []string
	var mu sync.Mutex
	echo := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		rec := httptest.NewRecorder()
		rec.WriteHeader(200)
		return rec.Result(), nil
	})
	s := inProcess(t, echo, nil)
	s.held.n.Add(maxHeldBodies - 3*holdStep) // others hold all but three steps: this body's first two fit, its third does not
	defer s.held.n.Add(-(maxHeldBodies - 3*holdStep))
	body := strings.Repeat("x", 10*holdStep)
	rec := send(s, context.Background(), "POST", "https://profile.xboxlive.com/users/batch/profile/settings", xuid1, strings.NewReader(body))
	if rec.Code != 200 || len(got) != 1 || got[0] != body {
		t.Errorf("status %d, the service got %d bodies (first %d bytes), want the %d-byte body once", rec.Code, len(got), len(strings.Join(got, "")), len(body))
	}
	if n := s.held.n.Load(); n != maxHeldBodies-3*holdStep {
		t.Errorf("after the call the reserve counts %d bytes more than before", n-(maxHeldBodies-3*holdStep))
	}
}

// reAnswer reads one answer on br (from c) within d.
func reAnswer(t *testing.T, c net.Conn, br *bufio.Reader, d time.Duration) (*http.Response, string, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// TestKeepAliveAfterForward: a call forwarded in absolute form that ended
// in time leaves its keep-alive connection usable for the next request,
// even one sent after MaxCallTime from the first call's start, or after
// the write deadline it left (MaxCallTime + answerGrace): the status API,
// a CONNECT, another call (a second and a third attack's probes of the
// deadlines).
func TestKeepAliveAfterForward(t *testing.T) {
	const maxCall = 300 * time.Millisecond
	for _, wait := range []time.Duration{2 * maxCall, maxCall + answerGrace + 300*time.Millisecond} {
		t.Run(wait.String(), func(t *testing.T) { keptAliveAfter(t, maxCall, wait) })
	}
}

// keptAliveAfter makes a call, waits wait, and sends each next request on
// the same connection.
func keptAliveAfter(t *testing.T, maxCall, wait time.Duration) {
	f := serve(t, func(c *Config) { c.MaxCallTime = maxCall })
	tok := mock.Token(xuid1, title)
	for _, next := range []struct{ name, req string }{
		{"status API", "GET /_fgrl/api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		{"CONNECT", "CONNECT profile.xboxlive.com:443 HTTP/1.1\r\nHost: profile.xboxlive.com:443\r\n\r\n"},
		{"forward again", "GET " + profileURL + " HTTP/1.1\r\nHost: profile.xboxlive.com\r\nx-xbl-contract-version: 3\r\nAuthorization: " + tok + "\r\n\r\n"},
	} {
		t.Run(next.name, func(t *testing.T) {
			c := dial(t, f.addr)
			br := bufio.NewReader(c)
			io.WriteString(c, "GET "+profileURL+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nx-xbl-contract-version: 3\r\nAuthorization: "+tok+"\r\n\r\n")
			resp, _, err := reAnswer(t, c, br, 5*time.Second)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("first call: %v %v", resp, err)
			}
			time.Sleep(wait)
			c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			io.WriteString(c, next.req)
			if next.name == "CONNECT" {
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				line, err := br.ReadString('\n')
				if err != nil || !strings.Contains(line, " 200 ") {
					t.Errorf("a CONNECT on a keep-alive connection after a forwarded call got %q, %v; want 200", line, err)
				}
				return
			}
			resp, body, err := reAnswer(t, c, br, 5*time.Second)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("%s on a keep-alive connection after a forwarded call: %v, %v (%.100s); want 200", next.name, resp, err, body)
			}
		})
	}
}

// TestTooLongCallAnswered504: a call cut at MaxCallTime (the service was
// slow) is answered 504: the write deadline was MaxCallTime itself, so the
// 504 was never written and the client saw the connection close (a second
// attack); if the connection stays open, it serves the next call.
func TestTooLongCallAnswered504(t *testing.T) {
	const maxCall = 400 * time.Millisecond
	slowOrOK := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("slow") != "" {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		rec := httptest.NewRecorder()
		rec.WriteHeader(200)
		io.WriteString(rec, "{}")
		return rec.Result(), nil
	})
	f := serve(t, func(c *Config) {
		c.MaxCallTime = maxCall
		c.Transport = &transport.Transport{Base: slowOrOK, TitleID: title, Raw429: true}
	})
	tok := mock.Token(xuid1, title)
	c := dial(t, f.addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET "+profileURL+"&slow=1 HTTP/1.1\r\nHost: profile.xboxlive.com\r\nx-xbl-contract-version: 3\r\nAuthorization: "+tok+"\r\n\r\n")
	resp, body, err := reAnswer(t, c, br, 5*time.Second)
	if err != nil || resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("the slow call: %v, %v (%.100s); want 504", resp, err, body)
	}
	if resp.Close {
		return
	}
	io.WriteString(c, "GET "+profileURL+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nx-xbl-contract-version: 3\r\nAuthorization: "+tok+"\r\n\r\n")
	resp, body, err = reAnswer(t, c, br, 5*time.Second)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("the next call on the kept-alive connection: %v, %v (%.200s); want 200", resp, err, body)
	}
}

// TestHeldBodiesWholeUnderRace: bodies of every size around hold's steps,
// with the reserve running out at every point, sent at once: each arrives
// whole, and the reserve is back where it was (a second attack's probe).
func TestHeldBodiesWholeUnderRace(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	echo := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[string(b)]++
		mu.Unlock()
		rec := httptest.NewRecorder()
		rec.WriteHeader(200)
		return rec.Result(), nil
	})
	s := inProcess(t, echo, func(c *Config) { c.Transport.DisableBudget = true })
	const others = maxHeldBodies - 200<<10
	s.held.n.Add(others)
	defer s.held.n.Add(-others)
	sizes := []int{1, holdStep - 1, holdStep, holdStep + 1, 3 * holdStep, 12<<10 + 1, 28 << 10, 60<<10 + 7, maxRewindBody}
	var bodies []string
	for i := range 48 {
		b := make([]byte, sizes[i%len(sizes)])
		for j := range b {
			b[j] = byte('a' + (i+j/1000)%26)
		}
		bodies = append(bodies, string(b))
	}
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Go(func() {
			send(s, context.Background(), "POST", "https://profile.xboxlive.com/users/batch/profile/settings", xuid1, strings.NewReader(b), HeaderFailFast, "true")
		})
	}
	wg.Wait()
	for i, b := range bodies {
		if got[b] < 1 {
			t.Errorf("body %d (%d bytes) never arrived whole", i, len(b))
		}
	}
	if n := s.held.n.Load(); n != others {
		t.Errorf("after the calls the reserve counts %d bytes more than before", n-others)
	}
}
