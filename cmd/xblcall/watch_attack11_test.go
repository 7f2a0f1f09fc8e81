package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/mock"
)

const attack11Me, attack11Other = "2533274791234567", "2533274799999999"

// attack11RTA is a Real-Time Activity service of the test's: it takes the
// websocket at /connect with the subprotocol (or drops it at once), and
// answers each subscribe [1, seq, uri] with answer's message ("" none).
type attack11RTA struct {
	drop   bool
	deaf   bool // after two subscribes answered, reads nothing more (no close handshake)
	answer func(conn int, seq int, uri string) []string
	conns  atomic.Int32
	subs   atomic.Int32
}

func (s *attack11RTA) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/connect" {
		http.NotFound(w, r)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"rta.xboxlive.com.V2"}})
	if err != nil {
		return
	}
	defer ws.CloseNow()
	n := int(s.conns.Add(1))
	if s.drop {
		ws.Close(websocket.StatusGoingAway, "")
		return
	}
	ctx := r.Context()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var m []json.RawMessage
		if json.Unmarshal(b, &m) != nil || len(m) != 3 || string(m[0]) != "1" {
			continue
		}
		var seq int
		var uri string
		json.Unmarshal(m[1], &seq)
		json.Unmarshal(m[2], &uri)
		s.subs.Add(1)
		for _, a := range s.answer(n, seq, uri) {
			if ws.Write(ctx, websocket.MessageText, []byte(a)) != nil {
				return
			}
		}
		if s.deaf && s.subs.Load() >= 2 {
			<-ctx.Done()
			return
		}
	}
}

// attack11Accept is a subscribe's answer in force, with the user's presence.
func attack11Accept(seq int, xuid string) string {
	return fmt.Sprintf(`[1,%d,0,%d,{"xuid":%q,"state":"Offline"}]`, seq, 100+seq, xuid)
}

func attack11Refuse(seq, code int) string { return fmt.Sprintf(`[1,%d,%d]`, seq, code) }

// attack11Watch runs xblcall watch presence target at srv for the arguments,
// and returns its exit status, output and time taken.
func attack11Watch(t *testing.T, ctx context.Context, srvURL, target string, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	var out, errb syncBuffer
	start := time.Now()
	code := run(ctx, append([]string{"watch", "presence", target, "--xuid", attack11Me, "--via", srvURL}, args...), &out, &errb, withTestEnv(t))
	return code, out.String(), errb.String(), time.Since(start)
}

// attack11Secret is the secret part of the token watch sends at a --via mock
// (mock.Token for --xuid and --title): never printed.
func attack11Secret() string {
	tok := mock.Token(attack11Me, "1234567890")
	return tok[strings.Index(tok, ";")+1:]
}

// held: TestAttack11WatchOneRefusedKeepsRunning: the service refuses the
// device presence for good (code 3, access denied) and takes the title
// presence: watch keeps running to --for and exits 0; and when it answers
// the device presence's refusal twice (the same resource refused twice),
// that is still one resource, not both.
//
// watch.go: "It exits 1 ... at once when the service refuses both
// subscriptions for good"; the refusal of one is not that.
func TestAttack11WatchOneRefusedKeepsRunning(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	for _, twice := range []bool{false, true} {
		srv := httptest.NewServer(&attack11RTA{answer: func(_ int, seq int, uri string) []string {
			if strings.HasSuffix(uri, "/devices") {
				if twice {
					return []string{attack11Refuse(seq, 3), attack11Refuse(seq, 3)}
				}
				return []string{attack11Refuse(seq, 3)}
			}
			return []string{attack11Accept(seq, attack11Other)}
		}})
		code, out, errs, took := attack11Watch(t, context.Background(), srv.URL, attack11Other, "--for", "2s")
		srv.Close()
		if code != 0 || took < 1900*time.Millisecond || strings.Count(out, "refused "+attack11Other) != 1 || !strings.Contains(out, "subscribed "+attack11Other) {
			t.Errorf("twice %v: exit %d after %v; stdout %q stderr %q; want 0 at --for, one refused line, one subscribed", twice, code, took, out, errs)
		}
	}
}

// held: TestAttack11WatchThrottledIsNotForGood: a service that answers every
// subscribe Throttled (1001) or ServiceUnavailable (1002), which the
// client sends again (client.User.Subscribe: "a subscription refused with
// Throttled (1001) or ServiceUnavailable (1002) is sent again after
// min(attempt², 60) s"), never refuses for good: watch runs to --for and
// exits 0, with no refused line; the same with one of them refused for
// good and the other throttled.
func TestAttack11WatchThrottledIsNotForGood(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	for _, mixed := range []bool{false, true} {
		srv := httptest.NewServer(&attack11RTA{answer: func(_ int, seq int, uri string) []string {
			if mixed && strings.HasSuffix(uri, "/devices") {
				return []string{attack11Refuse(seq, 1)}
			}
			return []string{attack11Refuse(seq, 1001+seq%2)}
		}})
		rta := srv.Config.Handler.(*attack11RTA)
		code, out, errs, took := attack11Watch(t, context.Background(), srv.URL, attack11Other, "--for", "2500ms")
		srv.Close()
		want := 0
		if mixed {
			want = 1
		}
		if code != 0 || took < 2400*time.Millisecond || strings.Count(out, "refused "+attack11Other) != want || strings.Contains(errs, "refused") {
			t.Errorf("mixed %v: exit %d after %v; stdout %q stderr %q; want 0 at --for, %d refused lines", mixed, code, took, out, errs, want)
		}
		if n := rta.subs.Load(); n < 3 {
			t.Errorf("mixed %v: %d subscribes; the throttled one was not sent again", mixed, n)
		}
	}
}

// held: TestAttack11WatchBothRefusedEndsAtOnce: the service refuses both for
// good with other codes than access denied (1 unknown resource, 2 the
// subscription limit): exit 1 at once (--for 30s not waited), the
// "every subscription was refused" line, and no token anywhere; the same
// when the service then reads nothing more (it never answers the close
// of the websocket), within the websocket library's close handshake
// (github.com/coder/websocket waits up to 5 s for the service's close
// frame: written down as left open, RELIABILITY.md).
//
// watch.go: "It exits 1 ... and at once when the service refuses both
// subscriptions for good"; "Tokens are never printed."
func TestAttack11WatchBothRefusedEndsAtOnce(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	for _, deaf := range []bool{false, true} {
		srv := httptest.NewServer(&attack11RTA{deaf: deaf, answer: func(_ int, seq int, uri string) []string {
			return []string{attack11Refuse(seq, seq)} // 1 and 2
		}})
		code, out, errs, took := attack11Watch(t, context.Background(), srv.URL, attack11Other, "--for", "30s")
		srv.Close()
		bound := 2 * time.Second
		if deaf {
			bound = 7 * time.Second
		}
		if code != 1 || took > bound || strings.Count(out, "refused "+attack11Other) != 2 || !strings.Contains(errs, "every subscription was refused: ") {
			t.Errorf("deaf %v: exit %d after %v; stdout %q stderr %q; want 1 at once, two refused lines", deaf, code, took, out, errs)
		}
		if strings.Contains(out+errs, attack11Secret()) {
			t.Errorf("deaf %v: a token printed: %q %q", deaf, out, errs)
		}
	}
}

// held: TestAttack11WatchDroppedEveryTimeIsConnected: a service that takes the
// websocket and drops it at once, every time: the connection was made
// (a "connected" line each time), so watch ends at --for with exit 0, not
// "never connected" (watch.go: "It exits 1 when it ends without the
// connection ever made").
func TestAttack11WatchDroppedEveryTimeIsConnected(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	srv := httptest.NewServer(&attack11RTA{drop: true})
	defer srv.Close()
	code, out, errs, took := attack11Watch(t, context.Background(), srv.URL, attack11Other, "--for", "2s")
	if code != 0 || took < 1900*time.Millisecond || !strings.Contains(out, " connected") || !strings.Contains(out, "disconnected") || strings.Contains(errs, "never connected") {
		t.Errorf("exit %d after %v; stdout %q stderr %q; want 0 at --for, connected and disconnected lines", code, took, out, errs)
	}
}

// held: TestAttack11WatchNeverConnectedTellsNoToken: a service that answers
// the upgrade 101 with a Connection header echoing the Authorization it
// was sent (the websocket library quotes that header in its error), and
// one that answers 401 with the token in its body: exit 1 at --for,
// "never connected to the Real-Time Activity service: <the last error>",
// and the token in no line.
//
// watch.go: "It exits 1 when it ends without the connection ever made
// (the last error says why)"; "Tokens are never printed."
func TestAttack11WatchNeverConnectedTellsNoToken(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	for _, kind := range []string{"101-echo", "401-body"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			if kind == "401-body" {
				http.Error(w, "bad token "+auth, http.StatusUnauthorized)
				return
			}
			c, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: " + auth + "\r\n\r\n")
			buf.Flush()
		}))
		code, out, errs, _ := attack11Watch(t, context.Background(), srv.URL, attack11Other, "--for", "1500ms")
		srv.Close()
		t.Logf("%s: exit %d; stderr %q", kind, code, errs)
		if code != 1 || !strings.Contains(errs, "never connected to the Real-Time Activity service: ") {
			t.Errorf("%s: exit %d; stdout %q stderr %q; want 1, never connected with the last error", kind, code, out, errs)
		}
		if strings.Contains(out+errs, attack11Secret()) {
			t.Errorf("%s: a token printed: %q %q", kind, out, errs)
		}
	}
}

// held: TestAttack11WatchEventsCounting: --events counts the lines printed,
// refusals and connection lines among them: --events 3 with one
// subscription refused and one taken ends after three lines, exit 0; and
// --events 1 where nothing listens ends after the one "disconnected"
// line, exit 1, never connected (watch.go: "It runs until ... --events
// events were printed. It exits 1 when it ends without the connection
// ever made").
func TestAttack11WatchEventsCounting(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	srv := httptest.NewServer(&attack11RTA{answer: func(_ int, seq int, uri string) []string {
		if strings.HasSuffix(uri, "/devices") {
			return []string{attack11Refuse(seq, 3)}
		}
		return []string{attack11Accept(seq, attack11Other)}
	}})
	defer srv.Close()
	code, out, errs, took := attack11Watch(t, context.Background(), srv.URL, attack11Other, "--events", "3", "--for", "30s")
	if code != 0 || took > 5*time.Second || strings.Count(out, "\n") != 3 {
		t.Errorf("--events 3: exit %d after %v; stdout %q stderr %q; want 0 after 3 lines", code, took, out, errs)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	code, out, errs, took = attack11Watch(t, context.Background(), closed, attack11Other, "--events", "1", "--for", "30s")
	if code != 1 || took > 5*time.Second || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "never connected") {
		t.Errorf("--events 1, nothing listening: exit %d after %v; stdout %q stderr %q; want 1 after one line, never connected", code, took, out, errs)
	}
}

// held: TestAttack11WatchYourself: watching one's own presence (XUID equal to
// --xuid) at the mock: both subscriptions taken, none refused, watch runs
// to --for, exit 0.
func TestAttack11WatchYourself(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	h := mock.Must(mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{{XUID: attack11Me}}}}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, out, errs, took := attack11Watch(t, context.Background(), srv.URL, attack11Me, "--for", "1500ms")
	if code != 0 || took < 1400*time.Millisecond || strings.Count(out, "subscribed "+attack11Me) != 2 || strings.Contains(out, "refused") {
		t.Errorf("exit %d after %v; stdout %q stderr %q; want 0 at --for, two subscribed lines", code, took, out, errs)
	}
}

// held: TestAttack11WatchCtrlCInEachState: Ctrl-C (the run's context cancelled)
// while never connected, while connected (to a service that reads on, and
// to one that reads nothing more: no close handshake), and while
// connected then lost (waiting to connect again): each ends within 2 s. Never connected, the
// exit is 130 ("interrupted"): README "Exit status is 0 for success, ...
// 130 when interrupted"; main.go run "130 when interrupted (Ctrl-C)".
func TestAttack11WatchCtrlCInEachState(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	taken := httptest.NewServer(&attack11RTA{answer: func(_ int, seq int, uri string) []string { return []string{attack11Accept(seq, attack11Other)} }})
	defer taken.Close()
	deaf := httptest.NewServer(&attack11RTA{deaf: true, answer: func(_ int, seq int, uri string) []string { return []string{attack11Accept(seq, attack11Other)} }})
	defer deaf.Close()
	dropped := httptest.NewServer(&attack11RTA{drop: true})
	defer dropped.Close()
	for _, st := range []struct {
		name, url string
	}{{"never connected", closed}, {"connected", taken.URL}, {"connected, the service reading nothing more", deaf.URL}, {"connected then lost", dropped.URL}} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(700*time.Millisecond, cancel)
		code, out, errs, took := attack11Watch(t, ctx, st.url, attack11Other)
		cancel()
		t.Logf("%s: exit %d after %v; stdout %q stderr %q", st.name, code, took, out, errs)
		if took > 2700*time.Millisecond {
			t.Errorf("%s: ended %v after a Ctrl-C at 0.7 s", st.name, took-700*time.Millisecond)
		}
		if st.name == "never connected" && (code != 130 || !strings.Contains(errs, "interrupted")) {
			t.Errorf("%s: exit %d, stderr %q; want 130, interrupted", st.name, code, errs)
		}
	}
}
