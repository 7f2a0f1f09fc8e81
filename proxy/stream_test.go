package proxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// upstream serves h over HTTPS (HTTP/1.1) on loopback and returns a
// RoundTripper that sends every request there, whatever its host, as a
// stand-in service.
func upstream(t *testing.T, h http.Handler) http.RoundTripper { return upstreamProto(t, false, h) }

// upstreamProto serves h over HTTPS on loopback, HTTP/2 when h2, and
// returns a RoundTripper that sends every request there.
func upstreamProto(t *testing.T, h2 bool, h http.Handler) http.RoundTripper {
	return serveTLS(t, h, h2, func(net.Conn) {})
}

// serveTLS serves h over HTTPS on loopback (HTTP/2 when h2) and returns a
// RoundTripper that sends every request there, whatever its host; each
// connection, on either side, is given to conn when it is made.
func serveTLS(t *testing.T, h http.Handler, h2 bool, conn func(net.Conn)) http.RoundTripper {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conn(c)
		}
	}
	ts.EnableHTTP2 = h2
	ts.StartTLS()
	t.Cleanup(ts.Close)
	addr := strings.TrimPrefix(ts.URL, "https://")
	pool := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				conn(c)
			}
			return c, err
		},
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: "example.com"},
		ForceAttemptHTTP2: h2,
	}
}

// withBase is a Config edit that sends the calls to base.
func withBase(base http.RoundTripper) func(*Config) {
	return func(c *Config) { c.Transport = &transport.Transport{Base: base, TitleID: title, Raw429: true} }
}

// guard fails the test when ch does not deliver within 10 s: a stream the
// proxy held whole would never deliver its first part.
func guard[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never came: the proxy held the stream", what)
		panic("unreachable")
	}
}

// TestBodiesStreamed: a large request body reaches the service while the
// application is still sending it, and an answer reaches the application
// while the service is still writing it: the proxy holds neither.
func TestBodiesStreamed(t *testing.T) {
	const part = 256 << 10
	gotFirst, sendRest := make(chan int), make(chan struct{})
	svc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.ReadFull(r.Body, make([]byte, part))
		gotFirst <- n
		rest, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("a", part))
		w.(http.Flusher).Flush()
		<-sendRest
		io.WriteString(w, "end "+strconv.Itoa(int(rest)))
	})
	f := serve(t, withBase(upstream(t, svc)))
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", pr)
	req.ContentLength = 2 * part
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := f.client.Do(req)
		if err != nil {
			t.Error(err)
			close(answered)
			return
		}
		answered <- resp
	}()
	pw.Write(make([]byte, part))
	guard(t, gotFirst, "the body's first part at the service")
	pw.Write(make([]byte, part))
	pw.Close()
	resp := guard(t, answered, "the answer")
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, part)); err != nil {
		t.Fatal(err)
	}
	close(sendRest)
	if rest, _ := io.ReadAll(resp.Body); string(rest) != "end "+strconv.Itoa(part) {
		t.Errorf("the answer ended %q, want end %d", rest, part)
	}
}

// TestHeaderBounded: a request header past 64 KiB is refused, in a tunnel
// (HTTP/1.1: 431; HTTP/2: the connection, COMPRESSION_ERROR) as on the
// proxy's port (431), and nothing is sent.
func TestHeaderBounded(t *testing.T) {
	f := serve(t, nil)
	big := strings.Repeat("a", 80<<10)
	// A Transport with its own TLSClientConfig speaks HTTP/1.1 unless told.
	h1 := &http.Transport{Proxy: f.client.Transport.(*http.Transport).Proxy, TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool()}}
	resp, _, err := get(t, &http.Client{Transport: h1}, t.Context(), profileURL, xuid1, "X-Big", big)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("in a tunnel, HTTP/1.1: %v %v, want 431", resp, err)
	}
	if resp, _, err = get(t, f.client, t.Context(), profileURL, xuid1, "X-Big", big); err == nil { // HTTP/2: GOAWAY
		t.Errorf("in a tunnel, HTTP/2: %d, want the connection refused", resp.StatusCode)
	}
	raw, _ := rawRequest(t, f.addr, "GET "+profileURL+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nX-Big: "+big+"\r\n\r\n")
	if raw.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("on the port: %d, want 431", raw.StatusCode)
	}
	if n := f.tr.Stats().Attempts; n != 0 {
		t.Errorf("the transport sent %d requests", n)
	}
}
