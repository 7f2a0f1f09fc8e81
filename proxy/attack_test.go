package proxy

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestMalformedAbsoluteForm: requests in absolute form whose URL is
// malformed, names no host, another host behind a user-info or fragment
// trick, another port or scheme, are refused before anything is sent; a
// user-info on an Xbox host's URL is dropped, never sent on.
func TestMalformedAbsoluteForm(t *testing.T) {
	var sent []*url.URL // the URLs the transport's base was given
	var mu sync.Mutex
	f := serve(t, func(c *Config) {
		base := c.Transport.Base
		c.Transport.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, r.URL)
			mu.Unlock()
			return base.RoundTrip(r)
		})
	})
	tok := mock.Token(xuid1, title)
	for _, tc := range []struct {
		name, target string
		want         int
	}{
		{"port out of range", "https://profile.xboxlive.com:99999/users/me/profile/settings", 403},
		{"no host", "https:///users/me/profile/settings", 403},
		{"opaque", "https:profile.xboxlive.com", 403},
		{"escaped slash in the host", "https://profile.xboxlive.com%2f.evil.example/", 400},
		{"loopback", "https://[::1]:443/", 403},
		{"user-info hiding another host", "https://profile.xboxlive.com@evil.example/users/me/profile/settings", 403},
		{"fragment hiding another host", "https://evil.example#@profile.xboxlive.com/", 400},
		{"websocket scheme", "wss://profile.xboxlive.com/", 403},
		{"user-info on the Xbox host", "https://u:p@profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", 200},
	} {
		resp, body := rawRequest(t, f.addr, "GET "+tc.target+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+tok+
			"\r\nx-xbl-contract-version: 3\r\nConnection: close\r\n\r\n")
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET %s: %d %q, want %d", tc.name, tc.target, resp.StatusCode, body, tc.want)
		}
	}
	if n := f.tr.Stats().Attempts; n != 1 {
		t.Errorf("the transport sent %d requests, want the 1 served", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range sent {
		if u.User != nil || u.Host != "profile.xboxlive.com" {
			t.Errorf("sent to %s, want profile.xboxlive.com and no user-info", u.Redacted())
		}
	}
}

// TestOriginFormNamesNoPeerHost: a request in origin form that is not for
// the proxy's pages is answered 400 naming the address it came to, never
// the Host the peer chose.
func TestOriginFormNamesNoPeerHost(t *testing.T) {
	f := serve(t, nil)
	resp, body := rawRequest(t, f.addr, "GET /users/me HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "evil") || !strings.Contains(body, "HTTPS_PROXY=http://"+f.addr) {
		t.Errorf("got %d %q, want 400 naming %s and not the Host", resp.StatusCode, body, f.addr)
	}
}

// TestMalformedBodyIsTheApplications: a streamed request body that is not
// valid chunked encoding fails the call with 400 (the application's
// fault), not 502 (the service's).
func TestMalformedBodyIsTheApplications(t *testing.T) {
	f := serve(t, nil)
	resp, body := rawRequest(t, f.addr, "POST https://profile.xboxlive.com/users/batch/profile/settings HTTP/1.1\r\n"+
		"Host: profile.xboxlive.com\r\nAuthorization: "+mock.Token(xuid1, title)+"\r\nx-xbl-contract-version: 3\r\n"+
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"use\r\nzz\r\n")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "did not arrive whole") {
		t.Errorf("got %d %q, want 400: the body did not arrive whole", resp.StatusCode, body)
	}
	if got := f.srv.Stats().Failed; got != 1 {
		t.Errorf("Stats().Failed = %d, want 1", got)
	}
}

// TestSlowPeersCut: a peer that stalls (a CONNECT header half sent, no TLS
// handshake in its tunnel, half a handshake, half a request header in the
// decrypted tunnel) holds its connection no longer than the header
// timeout, and nothing is sent.
func TestSlowPeersCut(t *testing.T) {
	const timeout = 200 * time.Millisecond
	f := serve(t, func(c *Config) {
		c.ConfigureServer = func(srv *http.Server) { srv.ReadHeaderTimeout, srv.IdleTimeout = timeout, time.Minute }
	})
	for _, tc := range []struct {
		name  string
		stall func(t *testing.T) net.Conn // opens a connection and stalls on it
	}{
		{"half a CONNECT", func(t *testing.T) net.Conn {
			c := dial(t, f.addr)
			io.WriteString(c, "CONNECT profile.xboxlive.com:443 HTTP/1.1\r\n")
			return c
		}},
		{"no handshake", func(t *testing.T) net.Conn {
			_, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
			return c
		}},
		{"half a handshake", func(t *testing.T) net.Conn {
			_, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
			c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}) // a ClientHello's record header and first byte
			return c
		}},
		{"half a request in the tunnel", func(t *testing.T) net.Conn {
			_, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
			tc := tls.Client(c, &tls.Config{ServerName: "profile.xboxlive.com", RootCAs: f.ca.Pool(), NextProtos: []string{"http/1.1"}})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(tc, "GET /users/me/profile/settings HTTP/1.1\r\n")
			return tc
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.stall(t)
			start := time.Now()
			c.SetReadDeadline(start.Add(10 * time.Second))
			_, err := io.Copy(io.Discard, c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the connection was still open after 10 s")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("closed after %v, want about %v", d, timeout)
			}
		})
	}
	if n := f.tr.Stats().Attempts; n != 0 {
		t.Errorf("the transport sent %d requests", n)
	}
}

// dial opens a connection to addr, closed when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCopyBuffersReused: the answers' copy buffers go back to the pool and
// come out again, so a call does not allocate one (BENCHMARKS.md §9);
// a buffer of another size is not taken.
func TestCopyBuffersReused(t *testing.T) {
	var p copyBuffers
	reused := false
	for range 100 { // under -race, sync.Pool drops a quarter of what it is given
		b := p.Get()
		if len(b) != copyBufferSize {
			t.Fatalf("Get returned %d bytes, want %d", len(b), copyBufferSize)
		}
		p.Put(b)
		if c := p.Get(); &c[0] == &b[0] {
			reused = true
			p.Put(c)
			break
		}
	}
	if !reused {
		t.Error("no buffer came back out of the pool in 100 tries")
	}
	p.Put(make([]byte, 10))
	if b := p.Get(); len(b) != copyBufferSize {
		t.Errorf("after a foreign buffer, Get returned %d bytes", len(b))
	}
}

// TestPolicyHeadersOnlyAdd: a policy header sets its field over the
// Transport's Policy as transport.WithPolicy layers them: on a proxy that
// fails fast, "Fgrl-Fail-Fast: false" does not make a call wait, and the
// 11th read of a burst is refused locally at once.
func TestPolicyHeadersOnlyAdd(t *testing.T) {
	f := serve(t, func(c *Config) { c.Transport.Policy.FailFast = true })
	got, local := statuses(burst(t, f.client, 11, profileURL, xuid1, HeaderFailFast, "false"))
	if got[200] != 10 || got[429] != 1 || local != 1 {
		t.Errorf("statuses %v, %d local; want 10 served and 1 refused locally", got, local)
	}
}
