package proxy

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAttackUpgradeInTunnelEndsAtMaxCallTime: a request inside a tunnel asks
// for a WebSocket upgrade and the service agrees (101): whatever the proxy
// does with it, the call ends by MaxCallTime. Promise (Config.MaxCallTime):
// "MaxCallTime bounds a call from its arrival to the end of its answer,
// waits included, whatever the application's own timeout".
func TestAttackUpgradeInTunnelEndsAtMaxCallTime(t *testing.T) {
	const maxCall = time.Second
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "no upgrade", 400)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		rw.Flush()
		io.Copy(c, rw) // echo until the proxy closes
	}))
	f := serve(t, func(c *Config) {
		withBase(base)(c)
		c.MaxCallTime = maxCall
	})
	auth, _ := pxAtk2Tokens(xuid1)
	tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
	defer tc.Close()
	start := time.Now()
	io.WriteString(tc, "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+
		"\r\nx-xbl-contract-version: 3\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	tc.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	t.Logf("answer to the upgrade: %d", resp.StatusCode)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return // refused: nothing is piped
	}
	// Served as a pipe: it echoes, and must end by MaxCallTime (+ a second).
	deadline := start.Add(maxCall + answerGrace + 2*time.Second)
	tc.SetDeadline(deadline.Add(3 * time.Second))
	buf := make([]byte, 64)
	for i := 0; ; i++ {
		if _, err := fmt.Fprintf(tc, "ping%d", i); err != nil {
			break
		}
		if _, err := br.Read(buf); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upgraded pipe still echoes %v after the call began (MaxCallTime %v)", time.Since(start).Round(time.Millisecond), maxCall)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the pipe ended after %v", time.Since(start).Round(time.Millisecond))
}

// TestAttackUnreadLargeAnswerEnds: an application asks for a large answer and
// never reads it; its connection ends by MaxCallTime plus a second, for
// HTTP/1.1 and HTTP/2 tunnels. Promise (Config.MaxCallTime): it bounds a
// call "from its arrival to the end of its answer".
func TestAttackUnreadLargeAnswerEnds(t *testing.T) {
	const maxCall = time.Second
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	for _, proto := range []string{"http/1.1", "h2"} {
		t.Run(proto, func(t *testing.T) {
			f := serve(t, func(c *Config) {
				withBase(base)(c)
				c.MaxCallTime = maxCall
			})
			auth, _ := pxAtk2Tokens(xuid1)
			resp, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
			if resp.StatusCode != 200 {
				t.Fatalf("CONNECT: %d", resp.StatusCode)
			}
			tc := tls.Client(c, &tls.Config{RootCAs: f.ca.Pool(), ServerName: "profile.xboxlive.com", NextProtos: []string{proto}})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			defer tc.Close()
			if proto == "h2" {
				if tc.ConnectionState().NegotiatedProtocol != "h2" {
					t.Skip("no h2 in the tunnel")
				}
				// Preface, empty SETTINGS, one HEADERS frame (HPACK literal,
				// no indexing) with END_STREAM|END_HEADERS on stream 1.
				io.WriteString(tc, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
				tc.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0})
				var hb []byte
				lit := func(n, v string) {
					hb = append(hb, 0x00, byte(len(n)))
					hb = append(hb, n...)
					hb = append(hb, byte(len(v)))
					hb = append(hb, v...)
				}
				hb = append(hb, 0x82, 0x87) // :method GET, :scheme https
				lit(":path", "/users/me/profile/settings")
				lit(":authority", "profile.xboxlive.com")
				lit("authorization", auth)
				lit("x-xbl-contract-version", "3")
				n := len(hb)
				tc.Write(append([]byte{byte(n >> 16), byte(n >> 8), byte(n), 1, 5, 0, 0, 0, 1}, hb...))
			} else {
				io.WriteString(tc, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+"\r\nx-xbl-contract-version: 3\r\n\r\n")
			}
			start := time.Now()
			time.Sleep(maxCall + answerGrace + time.Second)
			// Now read: the connection (HTTP/1.1) or the stream must be over.
			tc.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := io.Copy(io.Discard, tc)
			t.Logf("%s: read %d bytes, then %v, %v after the call began", proto, n, err, time.Since(start).Round(time.Millisecond))
			if ne, ok := err.(net.Error); ok && ne.Timeout() && proto == "http/1.1" {
				t.Errorf("the connection of an answer never read is still open %v after the call began (MaxCallTime %v)", time.Since(start).Round(time.Millisecond), maxCall)
			}
			if n > 256<<20 {
				t.Errorf("the answer kept coming: %d bytes", n)
			}
		})
	}
}

// TestAttackManySilentTunnelsEnd: 180 tunnels opened at once, a third sending
// nothing, a third half a ClientHello, a third a whole handshake and then
// no request: each is closed within the header timeout (plus slack), and
// the proxy's goroutines come back to what they were. Promise (README,
// RELIABILITY.md): "each connection closed after the header timeout".
func TestAttackManySilentTunnelsEnd(t *testing.T) {
	const hdr = 500 * time.Millisecond
	f := serve(t, func(c *Config) {
		c.ConfigureServer = func(s *http.Server) { s.ReadHeaderTimeout, s.IdleTimeout = hdr, 2*time.Second }
	})
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 60
	conns := make([]net.Conn, 0, 3*n)
	for i := 0; i < 3*n; i++ {
		resp, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
		if resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %d", resp.StatusCode)
		}
		switch i % 3 {
		case 1: // half a ClientHello record
			c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03})
		case 2:
			tc := tls.Client(c, &tls.Config{RootCAs: f.ca.Pool(), ServerName: "profile.xboxlive.com", NextProtos: []string{"http/1.1"}})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			c = tc
		}
		conns = append(conns, c)
	}
	start := time.Now()
	for i, c := range conns {
		c.SetReadDeadline(start.Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("tunnel %d (kind %d) still open 5 s on (header timeout %v)", i, i%3, hdr)
		}
		c.Close()
	}
	time.Sleep(500 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before+10 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines %d before, %d after every tunnel ended\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
