package mock

import (
	"bufio"
	"io"
	"net"
	"net/http"
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
