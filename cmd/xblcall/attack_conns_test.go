package main

import (
	"bufio"
	"crypto/tls"
	"io"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackTunnelUnsentBodyHoldsPort: through xblcall mock's CONNECT
// proxy, a tunnel whose one request declares a body that never comes is
// never closed (--idle-timeout and --header-timeout 100ms), and since a
// tunnel counts on the plain port (--max-conns 1), no other client of the
// plain port is answered while it lasts. The test waits 5 s.
func TestAttackTunnelUnsentBodyHoldsPort(t *testing.T) {
	t.Skip("fixed with the mock's pipeline")
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--ca-out", caFile, "--log-format", "off",
		"--max-conns", "1", "--idle-timeout", "100ms", "--header-timeout", "100ms")
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
