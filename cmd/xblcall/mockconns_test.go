package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMockIdleConnections: with --idle-timeout 100ms, xblcall mock closes
// a keep-alive connection idle after a request, on the plain port and the
// TLS port, and a CONNECT tunnel idle after a request; with
// --header-timeout 100ms, a tunnel that never starts its TLS handshake.
// The test waits for each close at most 5 s.
func TestMockIdleConnections(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	tlsConfig := func(t *testing.T) *tls.Config {
		return &tls.Config{RootCAs: trusting(t, caFile), ServerName: "profile.xboxlive.com", NextProtos: []string{"http/1.1"}}
	}
	for _, tc := range []struct {
		name string
		flag string // set to 100ms
		// open returns a connection ready for a request, or nil for one
		// left idle before it.
		open func(t *testing.T, plain, tlsAddr string) net.Conn
	}{
		{"plain keep-alive", "--idle-timeout", func(t *testing.T, plain, _ string) net.Conn { return dialT(t, plain) }},
		{"TLS keep-alive", "--idle-timeout", func(t *testing.T, _, tlsAddr string) net.Conn {
			return handshake(t, dialT(t, tlsAddr), tlsConfig(t))
		}},
		{"CONNECT tunnel", "--idle-timeout", func(t *testing.T, plain, _ string) net.Conn {
			return handshake(t, connectT(t, plain), tlsConfig(t))
		}},
		{"CONNECT tunnel before its handshake", "--header-timeout", func(t *testing.T, plain, _ string) net.Conn {
			waitClosed(t, connectT(t, plain))
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile, "--log-format", "off", tc.flag, "100ms")
			c := tc.open(t, addrAfter(t, out.String(), "http://"), addrAfter(t, out.String(), "https://"))
			if c == nil {
				return
			}
			r := bufio.NewReader(c)
			if err := exchange(c, r, 5*time.Second); err != nil {
				t.Fatalf("a request: %v", err)
			}
			waitClosed(t, c)
		})
	}
}

// TestMockMaxConns: with --max-conns 1, a second client's request is not
// answered while the first's connection is open, and is once it closes.
func TestMockMaxConns(t *testing.T) {
	t.Parallel()
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--log-format", "off", "--max-conns", "1")
	plain := addrAfter(t, out.String(), "http://")
	first, second := dialT(t, plain), dialT(t, plain)
	if err := exchange(first, bufio.NewReader(first), 5*time.Second); err != nil {
		t.Fatalf("the first: %v", err)
	}
	r := bufio.NewReader(second)
	// No answer can come while the first is open: the wait is only how
	// long the test looks.
	if err := exchange(second, r, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the second, with the first open: %v, want no answer", err)
	}
	first.Close()
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the second, once the first closed: %v", err)
	}
	resp.Body.Close()
}

// TestMockConnFlags: --idle-timeout, --header-timeout and --max-conns must
// be positive.
func TestMockConnFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--idle-timeout", "0s"}, {"--header-timeout", "-1s"}, {"--max-conns", "-1"}} {
		var out, errb strings.Builder
		if code := run(t.Context(), append([]string{"mock", "--addr", "127.0.0.1:0"}, args...), &out, &errb, withTestEnv(t)); code != 2 || !strings.Contains(errb.String(), "must be positive") {
			t.Errorf("%v: exit %d, %q; want 2 and the rule", args, code, errb.String())
		}
	}
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connectT opens a CONNECT tunnel to profile.xboxlive.com through the
// mock's plain port.
func connectT(t *testing.T, proxy string) net.Conn {
	t.Helper()
	c := dialT(t, proxy)
	io.WriteString(c, "CONNECT profile.xboxlive.com:443 HTTP/1.1\r\nHost: profile.xboxlive.com:443\r\n\r\n")
	// The 200 has no body: read it a byte at a time, leaving the tunnel's
	// bytes unread.
	var head []byte
	for !strings.HasSuffix(string(head), "\r\n\r\n") {
		b := make([]byte, 1)
		if _, err := c.Read(b); err != nil {
			t.Fatalf("CONNECT: %v after %q", err, head)
		}
		head = append(head, b[0])
	}
	if !strings.HasPrefix(string(head), "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", head)
	}
	return c
}

func handshake(t *testing.T, c net.Conn, cfg *tls.Config) net.Conn {
	t.Helper()
	tc := tls.Client(c, cfg)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc
}

// exchange sends a profile request on c and reads the answer within d.
func exchange(c net.Conn, r *bufio.Reader, d time.Duration) error {
	if _, err := io.WriteString(c, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n\r\n"); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// waitClosed fails t unless the server closes c within 5 s.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the mock kept an idle connection open 5 s")
	}
}
