package proxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestTunnelOthersUntouched: with TunnelOthers, CONNECT to another host is
// tunnelled to it untouched: the client's TLS ends at that host (it trusts
// that host's certificate, not the proxy's CA), and the transport sees
// nothing. Without it, the same CONNECT gets 403.
func TestTunnelOthersUntouched(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "origin") }))
	t.Cleanup(origin.Close)
	to := strings.TrimPrefix(origin.URL, "https://")
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "www.example.com:443" {
			t.Errorf("dialled %s, want www.example.com:443", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, to)
	}
	for _, others := range []bool{true, false} {
		f := serve(t, func(c *Config) { c.TunnelOthers, c.Dial = others, dial })
		u, _ := url.Parse("http://" + f.addr)
		pool := origin.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"}}}
		resp, err := c.Get("https://www.example.com/")
		switch {
		case others && err != nil:
			t.Errorf("TunnelOthers: %v", err)
		case others:
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "origin" || f.srv.Stats().Tunnelled != 1 {
				t.Errorf("TunnelOthers: %q, %d tunnelled; want the origin's answer through one tunnel", b, f.srv.Stats().Tunnelled)
			}
		case err == nil:
			resp.Body.Close()
			t.Error("without TunnelOthers, the CONNECT went through")
		}
		if n := f.tr.Stats().Attempts; n != 0 {
			t.Errorf("TunnelOthers %v: the transport sent %d requests", others, n)
		}
	}
}

// TestTunnelOthersReachNoPrivateAddress: the default dialer refuses every
// address that is not public, so that TunnelOthers opens no way into the
// machine or its network: 403, and no connection is made.
func TestTunnelOthersReachNoPrivateAddress(t *testing.T) {
	f := serve(t, func(c *Config) { c.TunnelOthers = true })
	for _, target := range []string{"localhost:443", "127.0.0.1:443", "10.1.2.3:443", "169.254.169.254:443", "[::1]:443", "0.0.0.0:443"} {
		resp, _ := connectRaw(t, f.addr, target)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "not a public address") {
			t.Errorf("CONNECT %s: %d %q, want 403, not a public address", target, resp.StatusCode, b)
		}
	}
}

// TestSpliceEnds: a tunnel to another host closes when neither side sends
// a byte for the idle time, stays open while either does, and closes when
// one side stops taking bytes; in virtual time (synctest).
func TestSpliceEnds(t *testing.T) {
	const idle = time.Minute
	for _, tc := range []struct {
		name string
		run  func(client, server net.Conn) // what the two ends do
		want time.Duration                 // when the tunnel closes
	}{
		{"idle", func(client, server net.Conn) {}, idle},
		{"busy one way", func(client, server net.Conn) {
			go io.Copy(io.Discard, client)
			for range 3 {
				time.Sleep(idle / 2)
				server.Write([]byte("x"))
			}
		}, idle/2*3 + idle},
		{"a side that takes nothing", func(client, server net.Conn) {
			go func() {
				for {
					if _, err := server.Write([]byte("x")); err != nil {
						return
					}
				}
			}()
		}, idle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client, a := net.Pipe()
				b, server := net.Pipe()
				start := time.Now()
				done := make(chan time.Duration)
				go func() { splice(a, b, idle); done <- time.Since(start) }()
				go tc.run(client, server)
				if got := <-done; got != tc.want {
					t.Errorf("closed after %v, want %v", got, tc.want)
				}
				client.Close()
				server.Close()
			})
		})
	}
}
