package proxy

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestAttackBadInputInTunnelNoPanic: malformed requests inside a decrypted
// tunnel (control characters in the request line, a NUL in the Host, a
// CONNECT inside the tunnel, an absolute URL for another host with a
// token in its user-info) are answered or cut, never panic (the log, which
// gets net/http's "http: panic serving", has none), and no answer body
// quotes the token.
func TestAttackBadInputInTunnelNoPanic(t *testing.T) {
	logger, logs := pxAtk2Logged()
	f := serve(t, func(c *Config) { c.Logger = logger; c.Transport.Logger = logger })
	auth, tok := pxAtk2Tokens(xuid1)
	for _, req := range []string{
		"GET /a\x01b\x7f HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth + "\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: profile.xboxlive.com\x00evil\r\nAuthorization: " + auth + "\r\n\r\n",
		"CONNECT profile.xboxlive.com:443 HTTP/1.1\r\nHost: profile.xboxlive.com:443\r\nAuthorization: " + auth + "\r\n\r\n",
		"GET https://u:" + tok + "@evil.example/x HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth + "\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth + "\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
		"\x16\x03\x01\x00\x05hello",
	} {
		tc, _ := pxAtkTunnel(t, f, "profile.xboxlive.com")
		io.WriteString(tc, req)
		tc.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(tc, 1<<20))
		tc.Close()
		first, _, _ := strings.Cut(string(b), "\r\n")
		t.Logf("%q -> %q", req[:min(len(req), 40)], first)
		if strings.Contains(string(b), tok) {
			t.Errorf("the answer to %q quotes the token", req[:min(len(req), 40)])
		}
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("a panic:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), tok) {
		t.Errorf("the log quotes the token:\n%s", logs.String())
	}
}
