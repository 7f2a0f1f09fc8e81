package proxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pxAtkConnectText sends a CONNECT written as given on a new connection and
// returns the answer and the connection.
func pxAtkConnectText(t *testing.T, addr, text string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, text)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	return resp, c, br
}

// TestAttackConnectPortBehindColons: the package promises "CONNECT to a host
// that is not one of the limits data's, or to a port other than 443, is
// refused with 403". A CONNECT whose target holds two colons
// (clubhub.xboxlive.com:8080.xboxlive.com:22) names port 22, yet
// net.SplitHostPort fails on it, the proxy takes port 443, and the glob
// club*.xboxlive.com matches once limits strips the last ":22". In the
// authority form net/http refuses it (400); in origin form (CONNECT /x,
// the target in the Host header, which net/http takes) the proxy answers
// 200: a tunnel opened, not refused (the TLS handshake in it then fails).
func TestAttackConnectPortBehindColons(t *testing.T) {
	f := serve(t, nil)
	const target = "clubhub.xboxlive.com:8080.xboxlive.com:22"
	for _, tc := range []struct{ name, text string }{
		{"authority", "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"},
		{"origin form, Host header", "CONNECT /x HTTP/1.1\r\nHost: " + target + "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, c, _ := pxAtkConnectText(t, f.addr, tc.text)
			if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusBadRequest {
				return
			}
			t.Errorf("CONNECT naming port 22 (%q): %s, want 403", strings.SplitN(tc.text, "\r\n", 3)[:2], resp.Status)
			if resp.StatusCode != http.StatusOK {
				return
			}
			// The attacker's own TLS client: it names the tunnel's host and
			// trusts anything.
			tc2 := tls.Client(c, &tls.Config{InsecureSkipVerify: true, ServerName: target, NextProtos: []string{"http/1.1"}})
			if err := tc2.Handshake(); err != nil {
				t.Logf("handshake in the tunnel: %v", err)
				return
			}
			io.WriteString(tc2, "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: "+target+
				"\r\nx-xbl-contract-version: 3\r\nConnection: close\r\n\r\n")
			r2, err := http.ReadResponse(bufio.NewReader(tc2), nil)
			if err != nil {
				t.Logf("request in the tunnel: %v", err)
				return
			}
			b, _ := io.ReadAll(r2.Body)
			t.Errorf("a request in that tunnel: %s %.200q; the transport sent %d requests", r2.Status, b, f.tr.Stats().Attempts)
		})
	}
}

// TestAttackConnectOriginFormOtherHost: CONNECT in origin form takes the Host
// header as its target: another host, an address, another port is
// refused as the authority form is (held).
func TestAttackConnectOriginFormOtherHost(t *testing.T) {
	f := serve(t, nil)
	for _, host := range []string{"www.example.com:443", "127.0.0.1:443", "profile.xboxlive.com:8443", "localhost", "[::1]:443",
		"profile.xboxlive.com:0443", "profile.xboxlive.com:+443"} {
		resp, _, _ := pxAtkConnectText(t, f.addr, "CONNECT /x HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("CONNECT /x, Host %s: %d, want 403", host, resp.StatusCode)
		}
	}
	if n := f.tr.Stats().Attempts; n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// pxAtkTunnel opens a decrypted tunnel to host and returns its TLS client.
func pxAtkTunnel(t *testing.T, f *fixture, host string) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	resp, c, _ := pxAtkConnectText(t, f.addr, fmt.Sprintf("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host))
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %d", host, resp.StatusCode)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: f.ca.Pool(), ServerName: host, NextProtos: []string{"http/1.1"}})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc, bufio.NewReader(tc)
}

// TestAttackPipelinedOtherHostInTunnel: two requests written at once in one
// tunnel, the second for another host (and one in absolute form for
// another host): the first is served, the others 421, sent nowhere (held).
func TestAttackPipelinedOtherHostInTunnel(t *testing.T) {
	f := serve(t, nil)
	tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
	req := func(target, host string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nx-xbl-contract-version: 3\r\n\r\n"
	}
	io.WriteString(tc, req("/users/me/profile/settings?settings=Gamertag", "profile.xboxlive.com")+
		req("/users/me/profile/settings?settings=Gamertag", "www.example.com")+
		req("https://www.example.com/x", "profile.xboxlive.com")+
		req("/x", "profile.xboxlive.com:8443"))
	want := []int{0, 421, 421, 421}
	for i, w := range want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		if w != 0 && resp.StatusCode != w {
			t.Errorf("answer %d: %d, want %d", i, resp.StatusCode, w)
		}
	}
	if n := f.tr.Stats().Attempts; n != 1 {
		t.Errorf("%d requests sent, want the first alone", n)
	}
}
