package mock

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUnsentBodyEndsItsConnection: a request whose header declares a body
// that never comes no longer holds its connection, and with it a slot of
// MaxConns, for ever (before: no read deadline, the idle and header
// timeouts do not apply, and the capture of the record of calls hid the
// body's kind from net/http, which then drained it without a deadline
// before answering): a small body never sent ends its connection after
// BodyTimeout, and another client gets the slot; a large one left unread,
// or one awaiting 100-continue, is answered at once. Each case waits at
// most 5 s for what 100 ms timeouts bring.
func TestUnsentBodyEndsItsConnection(t *testing.T) {
	const get = "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"
	for _, tc := range []struct {
		name   string
		header string
		// other: the test is whether another client is answered (MaxConns
		// 1); else whether this one is.
		other bool
	}{
		{"a declared body never sent holds the only slot", get + "Content-Length: 1\r\n\r\n", true},
		{"a chunked body never sent holds the only slot", get + "Transfer-Encoding: chunked\r\n\r\n", true},
		{"10 MB declared, unread by the handler: no answer", get + "Content-Length: 10000000\r\n\r\n", false},
		{"Expect: 100-continue, unread by the handler: no answer", get + "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewUnstartedServer(nil)
			s.Conns = ConnLimits{IdleTimeout: 100 * time.Millisecond, HeaderTimeout: 100 * time.Millisecond, BodyTimeout: 100 * time.Millisecond, MaxConns: 1}
			s.Start()
			defer s.Close()
			addr := s.srv.Listener.Addr().String()
			dial := func() net.Conn {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			holder := dial()
			defer holder.Close() // before s.Close, which waits for the held request
			if _, err := io.WriteString(holder, tc.header); err != nil {
				t.Fatal(err)
			}
			c, req := holder, ""
			if tc.other {
				c, req = dial(), get+"\r\n"
				defer c.Close()
			}
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer in 5 s (idle and header timeouts 100 ms): %v", err)
			}
			resp.Body.Close()
		})
	}
}

// TestBodyRateRule: MinBodyRate's rule, both sides, on a server of
// ConnLimits.Apply whose handler reads the whole body (helper 192 found the
// rule's godoc giving a declared body BodyTimeout + n/MinBodyRate in all,
// which the code never did): a 3 KiB body sent at twice MinBodyRate is
// read whole long past BodyTimeout; the same body sent at half of it is cut
// once it falls behind the rate (about 0.5 s here), well before
// BodyTimeout + n/MinBodyRate (3.2 s), the declared length buying nothing.
func TestBodyRateRule(t *testing.T) {
	const d, n = 200 * time.Millisecond, 3 << 10
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return // cut: the connection closes
		}
		w.Header().Set("X-Read", fmt.Sprint(len(b)))
	})}
	ConnLimits{BodyTimeout: d}.Apply(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	for _, tc := range []struct {
		name  string
		chunk int // bytes every 125 ms
		whole bool
	}{
		{"twice the rate", MinBodyRate / 4, true},
		{"half the rate", MinBodyRate / 16, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", n)
			answered := make(chan error, 1)
			go func() {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err == nil {
					resp.Body.Close()
					if got := resp.Header.Get("X-Read"); got != fmt.Sprint(n) {
						err = fmt.Errorf("answered %s having read %q bytes", resp.Status, got)
					}
				}
				answered <- err
			}()
			tick := time.NewTicker(125 * time.Millisecond)
			defer tick.Stop()
			chunk := strings.Repeat("x", tc.chunk)
			for sent := 0; sent < n; sent += tc.chunk {
				if _, err := io.WriteString(c, chunk); err != nil {
					break // cut
				}
				select {
				case <-tick.C:
				case err := <-answered:
					answered <- err
					sent = n
				}
			}
			err = <-answered
			took := time.Since(start)
			switch {
			case tc.whole && err != nil:
				t.Fatalf("a body at twice MinBodyRate: %v after %v; want it read whole", err, took)
			case !tc.whole && err == nil:
				t.Fatalf("a body at half MinBodyRate read whole after %v; want it cut once it falls behind", took)
			case !tc.whole && took >= d+n*time.Second/MinBodyRate:
				t.Fatalf("a body at half MinBodyRate cut after %v; want before BodyTimeout + n/MinBodyRate (%v): the rate counts, not the declared length", took, d+n*time.Second/MinBodyRate)
			case tc.whole && took < time.Second:
				t.Fatalf("the body took %v; the test wants one sent past BodyTimeout", took)
			}
			t.Logf("%s: %v after %v", tc.name, err, took.Round(time.Millisecond))
		})
	}
}
