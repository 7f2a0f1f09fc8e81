package proxy

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// connectRaw sends CONNECT target to the proxy on a new connection and
// returns the answer and the connection (the tunnel when 200).
func connectRaw(t *testing.T, addr, target string, hdr ...string) (*http.Response, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	extra := ""
	for i := 0; i+1 < len(hdr); i += 2 {
		extra += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target, extra)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK && br.Buffered() > 0 {
		t.Fatalf("the proxy sent %d bytes after its answer to CONNECT", br.Buffered())
	}
	return resp, c
}

// rawRequest sends one request, written as given, on a new connection to
// the proxy, and returns the answer with its body.
func rawRequest(t *testing.T, addr, text string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, text)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestConnectRefused: CONNECT to a host outside the limits data, to
// another port of an Xbox host or to an address is refused with 403
// naming it, and nothing is sent anywhere.
func TestConnectRefused(t *testing.T) {
	f := serve(t, nil)
	for _, target := range []string{"www.example.com:443", "profile.xboxlive.com:80", "127.0.0.1:443", "[::1]:443",
		"login.live.com:443", "profile.xboxlive.com.evil.example:443"} {
		resp, _ := connectRaw(t, f.addr, target)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), strings.Split(strings.Trim(target, "[]"), ":")[0]) {
			t.Errorf("CONNECT %s: %d %q, want 403 naming it", target, resp.StatusCode, b)
		}
	}
	if n := f.tr.Stats().Attempts; n != 0 {
		t.Errorf("the transport sent %d requests", n)
	}
	if n := f.srv.Stats().TunnelsRefused; n != 6 {
		t.Errorf("Stats().TunnelsRefused %d, want 6", n)
	}
}

// TestTunnelNamesItsHost: in a tunnel to profile.xboxlive.com, a TLS
// handshake for another name (or none) fails, and a request for another
// host (or port) is answered 421 without being sent.
func TestTunnelNamesItsHost(t *testing.T) {
	f := serve(t, nil)
	for _, sni := range []string{"social.xboxlive.com", ""} {
		_, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
		tc := tls.Client(c, &tls.Config{ServerName: sni, RootCAs: f.ca.Pool(), InsecureSkipVerify: sni == ""})
		if err := tc.Handshake(); err == nil {
			t.Errorf("a handshake for %q in a tunnel to profile.xboxlive.com went through", sni)
		}
	}
	for _, host := range []string{"social.xboxlive.com", "profile.xboxlive.com:8443", "www.example.com"} {
		_, c := connectRaw(t, f.addr, "profile.xboxlive.com:443")
		tc := tls.Client(c, &tls.Config{ServerName: "profile.xboxlive.com", RootCAs: f.ca.Pool(), NextProtos: []string{"http/1.1"}})
		fmt.Fprintf(tc, "GET /users/me/profile/settings HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\n\r\n", host, mock.Token(xuid1, title))
		resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil {
			t.Fatalf("Host %s: %v", host, err)
		}
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s in a tunnel to profile.xboxlive.com: %d, want 421", host, resp.StatusCode)
		}
	}
	if n := f.tr.Stats().Attempts; n != 0 {
		t.Errorf("the transport sent %d requests", n)
	}
	if n := f.srv.Stats().Misdirected; n != 5 {
		t.Errorf("Stats().Misdirected %d, want 5", n)
	}
}

// TestAbsoluteForm: a plain HTTP request in absolute form to an Xbox host
// over https is served as a tunnelled one; over http, to another host or
// port, or in origin form, it is refused and nothing is sent.
func TestAbsoluteForm(t *testing.T) {
	f := serve(t, nil)
	tok := mock.Token(xuid1, title)
	for _, tc := range []struct {
		target string
		want   int
	}{
		{profileURL, 200},
		{"HTTPS://PROFILE.XBOXLIVE.COM:443/users/me/profile/settings?settings=Gamertag", 200},
		{"http://profile.xboxlive.com/users/me/profile/settings", 403},
		{"https://profile.xboxlive.com:8443/users/me/profile/settings", 403},
		{"https://www.example.com/", 403},
		{"/users/me/profile/settings", 400},
	} {
		resp, body := rawRequest(t, f.addr, "GET "+tc.target+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+tok+
			"\r\nx-xbl-contract-version: 3\r\nConnection: close\r\n\r\n")
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s: %d %q, want %d", tc.target, resp.StatusCode, body, tc.want)
		}
	}
	if n := f.tr.Stats().Attempts; n != 2 {
		t.Errorf("the transport sent %d requests, want the 2 served", n)
	}
}

// TestAbsoluteFormOnlyFromLoopback: a request in absolute form carries its
// token in clear; from off loopback it is refused, token or not.
func TestAbsoluteFormOnlyFromLoopback(t *testing.T) {
	f := serve(t, func(c *Config) { c.Token = "s3cret" })
	req := httptest.NewRequest("GET", profileURL, nil)
	req.RemoteAddr = "192.0.2.7:4000"
	req.Header.Set("Proxy-Authorization", "Bearer s3cret")
	rec := httptest.NewRecorder()
	f.srv.serveHTTP(rec, req)
	if rec.Code != http.StatusForbidden || f.tr.Stats().Attempts != 0 {
		t.Errorf("%d, %d sent; want 403, none sent", rec.Code, f.tr.Stats().Attempts)
	}
}

// TestAccess: off loopback, CONNECT needs the access token in
// Proxy-Authorization (Basic's password, or Bearer), the admin endpoints
// in Authorization or ?token=; with no token set, peers off loopback get
// nothing; the admin endpoints answer to IP addresses and localhost only,
// and not to another site's page.
func TestAccess(t *testing.T) {
	basic := func(user, pw string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	}
	for _, tc := range []struct {
		name, token, method, target, remote, host, hdr, value string
		want                                                  int
	}{
		{"CONNECT, no token set", "", "CONNECT", "profile.xboxlive.com:443", "192.0.2.7:1", "", "", "", 403},
		{"CONNECT without the token", "s3cret", "CONNECT", "profile.xboxlive.com:443", "192.0.2.7:1", "", "", "", 407},
		{"CONNECT with another", "s3cret", "CONNECT", "profile.xboxlive.com:443", "192.0.2.7:1", "", "Proxy-Authorization", basic("fgrl", "nope"), 407},
		// Admitted: the recorder cannot be hijacked, so the tunnel ends there (505).
		{"CONNECT with Basic", "s3cret", "CONNECT", "profile.xboxlive.com:443", "192.0.2.7:1", "", "Proxy-Authorization", basic("any", "s3cret"), 505},
		{"CONNECT with Bearer", "s3cret", "CONNECT", "profile.xboxlive.com:443", "192.0.2.7:1", "", "Proxy-Authorization", "Bearer s3cret", 505},
		{"CONNECT from loopback", "", "CONNECT", "profile.xboxlive.com:443", "127.0.0.1:1", "", "", "", 505},
		{"admin, no token set", "", "GET", "/_fgrl/api/status", "192.0.2.7:1", "10.0.0.1:3128", "", "", 403},
		{"admin without the token", "s3cret", "GET", "/_fgrl/api/status", "192.0.2.7:1", "10.0.0.1:3128", "", "", 401},
		{"admin with Bearer", "s3cret", "GET", "/_fgrl/api/status", "192.0.2.7:1", "10.0.0.1:3128", "Authorization", "Bearer s3cret", 200},
		{"admin with ?token=", "s3cret", "GET", "/_fgrl/api/status?token=s3cret", "192.0.2.7:1", "10.0.0.1:3128", "", "", 200},
		{"admin from loopback", "", "GET", "/_fgrl/api/status", "127.0.0.1:1", "localhost:3128", "", "", 200},
		{"admin at a rebound name", "", "GET", "/_fgrl/api/status", "127.0.0.1:1", "evil.example:3128", "", "", 403},
		// another site's page (the mock's admin API's attack, one rule)
		{"admin from another site's page", "", "GET", "/_fgrl/api/status", "127.0.0.1:1", "localhost:3128", "Origin", "http://evil.example", 403},
		{"admin, Sec-Fetch-Site cross-site", "", "GET", "/_fgrl/api/status", "127.0.0.1:1", "localhost:3128", "Sec-Fetch-Site", "cross-site", 403},
		{"admin from its own page", "", "GET", "/_fgrl/api/status", "127.0.0.1:1", "localhost:3128", "Origin", "http://localhost:3128", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := serve(t, func(c *Config) { c.Token = tc.token })
			req := httptest.NewRequest(tc.method, tc.target, nil)
			if tc.method == "CONNECT" {
				req = &http.Request{Method: "CONNECT", Host: tc.target, URL: &url.URL{Host: tc.target}, Header: http.Header{}}
			}
			req.RemoteAddr = tc.remote
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.hdr != "" {
				req.Header.Set(tc.hdr, tc.value)
			}
			rec := httptest.NewRecorder()
			f.srv.serveHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%d %q, want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want == 407 && rec.Header().Get("Proxy-Authenticate") == "" {
				t.Error("a 407 without Proxy-Authenticate")
			}
		})
	}
}
