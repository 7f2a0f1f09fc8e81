package proxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestAttack87ResumedHandshakeNamingOtherHostRefused: a client resumes, in a
// tunnel to userpresence.xboxlive.com, the TLS session it had in a tunnel
// to profile.xboxlive.com, its handshake naming profile.xboxlive.com
// (SNI). The package doc:
//
//	"Inside a tunnel, a TLS handshake that names another host (SNI), or a
//	request whose Host is another, is refused (the handshake fails; 421)."
//
// and Stats.Misdirected counts "handshakes and requests for another host
// than their tunnel's". The handshake must fail and be counted.
func TestAttack87ResumedHandshakeNamingOtherHostRefused(t *testing.T) {
	f := serve(t, nil)
	cache := tls.NewLRUClientSessionCache(8)
	open := func(connectHost, sni string) (*tls.Conn, error) {
		resp, c, _ := pxAtkConnectText(t, f.addr, fmt.Sprintf("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", connectHost, connectHost))
		if resp.StatusCode != 200 {
			t.Fatalf("CONNECT %s: %d", connectHost, resp.StatusCode)
		}
		tc := tls.Client(c, &tls.Config{RootCAs: f.ca.Pool(), ServerName: sni, NextProtos: []string{"http/1.1"}, ClientSessionCache: cache})
		return tc, tc.Handshake()
	}
	// A first tunnel, to profile: a call in it, so that the client reads
	// the session ticket the server sends after the handshake.
	tc, err := open("profile.xboxlive.com", "profile.xboxlive.com")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(tc, "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+
		mock.Token(xuid1, title)+"\r\nx-xbl-contract-version: 3\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	tc.Close()
	before := f.srv.Stats().Misdirected

	// A second tunnel, to another Xbox host, whose handshake names profile.
	tc2, err := open("userpresence.xboxlive.com", "profile.xboxlive.com")
	if err == nil {
		defer tc2.Close()
		t.Errorf("a TLS handshake naming profile.xboxlive.com in a tunnel to userpresence.xboxlive.com succeeded (resumed: %v)",
			tc2.ConnectionState().DidResume)
	}
	if got := f.srv.Stats().Misdirected - before; got != 1 {
		t.Errorf("Stats().Misdirected grew by %d, want 1", got)
	}
}
