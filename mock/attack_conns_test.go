package mock

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestAttackUnsentBodyHoldsConnection: a request whose header declares a
// body that never comes holds its connection, and with it a slot of
// MaxConns, for ever: no read timeout is set, the idle and header timeouts
// do not apply, and nothing is ever answered. net/http alone answers such
// a request at once when the body is large (256 KiB or more) or awaits
// "100-continue", and closes the connection; the mock does not, since
// serveObserved replaces r.Body with its capture, so the server no longer
// knows the body's kind and reads up to 256 KiB of it, without a deadline,
// before it writes the answer. One client holding MaxConns such
// connections, each a single header, shuts every other client out.
// Each case waits at most 5 s for what 100 ms timeouts should bring.
func TestAttackUnsentBodyHoldsConnection(t *testing.T) {
	t.Skip("fixed with the mock's pipeline")
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
			s.Conns = ConnLimits{IdleTimeout: 100 * time.Millisecond, HeaderTimeout: 100 * time.Millisecond, MaxConns: 1}
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
