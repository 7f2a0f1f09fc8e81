package main

import (
	"bufio"
	"crypto/tls"
	"io"
	"path/filepath"
	"testing"
	"time"
)

// TestTunnelUnsentBodyEndsItsConnection: through xblcall mock's CONNECT
// proxy, a tunnel whose one request declares a body that never comes is
// closed after --body-timeout (before, never: no other client of the plain
// port, which the tunnel counts on with --max-conns 1, was answered while
// it lasted). The test waits at most 5 s.
func TestTunnelUnsentBodyEndsItsConnection(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--ca-out", caFile, "--log-format", "off",
		"--max-conns", "1", "--idle-timeout", "100ms", "--header-timeout", "100ms", "--body-timeout", "100ms")
	plain := addrAfter(t, out.String(), "http://")
	tunnel := handshake(t, connectT(t, plain), &tls.Config{RootCAs: trusting(t, caFile), ServerName: "profile.xboxlive.com", NextProtos: []string{"http/1.1"}})
	if _, err := io.WriteString(tunnel, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nContent-Length: 1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	other := dialT(t, plain)
	if err := exchange(other, bufio.NewReader(other), 5*time.Second); err != nil {
		t.Fatalf("another client of the plain port, with a tunnel holding a header 5 s: %v", err)
	}
}
