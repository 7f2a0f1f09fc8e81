package proxy

// A third attack's probes (2026-12-04), which held; they stay as tests.

import (
	"bufio"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestThirdPublicSpecialForms: IPv6 forms that reach a loopback, private
// or special IPv4 address (or IPv6 one) are not public, IPv4-mapped ones
// whether or not the caller unmapped them; ordinary public ones are.
func TestThirdPublicSpecialForms(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"2002:7f00:1::1", false}, {"2002:0000:0000::1", false}, {"2002:a9fe:a9fe::1", false},
		{"2002:6464:c8c8::1", false}, {"2002:c0a8:0101::1", false}, {"2002:0808:0808::1", true},
		{"::ffff:127.0.0.1", false}, {"::ffff:100.100.100.200", false}, {"::ffff:0:a9fe:a9fe", false},
		{"64:ff9b::7f00:1", false}, {"64:ff9b:1:ffff::1", false}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"::127.0.0.1", false}, {"::1", false}, {"fc00::1", false}, {"fe80::1", false}, {"fec0::1", false},
		{"2606:4700:4700::1111", true}, {"2620:fe::fe", true}, {"8.8.8.8", true}, {"::ffff:8.8.8.8", true},
		{"100.100.100.200", false}, {"192.0.0.170", false}, {"255.255.255.255", false},
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := public(a); got != tc.want {
			t.Errorf("public(%s) = %v, want %v", tc.addr, got, tc.want)
		}
		if got := public(a.Unmap()); got != tc.want {
			t.Errorf("public(%s unmapped) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestThirdKeepAliveAfterWriteGrace: a forwarded call leaves its write
// deadline (its start + MaxCallTime + answerGrace) on the connection; a
// next request on it after that deadline is still answered.
func TestThirdKeepAliveAfterWriteGrace(t *testing.T) {
	const maxCall = 300 * time.Millisecond
	f := serve(t, func(c *Config) { c.MaxCallTime = maxCall })
	tok := mock.Token(xuid1, title)
	for _, next := range []struct{ name, req string }{
		{"status API", "GET /_fgrl/api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		{"forward again", "GET " + profileURL + " HTTP/1.1\r\nHost: profile.xboxlive.com\r\nx-xbl-contract-version: 3\r\nAuthorization: " + tok + "\r\n\r\n"},
	} {
		t.Run(next.name, func(t *testing.T) {
			c := dial(t, f.addr)
			br := bufio.NewReader(c)
			io.WriteString(c, "GET "+profileURL+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nx-xbl-contract-version: 3\r\nAuthorization: "+tok+"\r\n\r\n")
			resp, _, err := reAnswer(t, c, br, 5*time.Second)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("first call: %v %v", resp, err)
			}
			time.Sleep(maxCall + answerGrace + 300*time.Millisecond)
			c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			io.WriteString(c, next.req)
			resp, body, err := reAnswer(t, c, br, 5*time.Second)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("%s on a keep-alive connection idle past the call's write grace: %v, %v (%.100s); want 200", next.name, resp, err, body)
			}
		})
	}
}
