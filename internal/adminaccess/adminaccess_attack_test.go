package adminaccess

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// held: the DNS rebinding guard takes no spelling of a name that is not
// an IP address, localhost or one of Hosts: a rebinding name in any case,
// with a port, a trailing dot (or two), a name that only starts or ends
// like localhost or 127.0.0.1, numeric spellings a resolver takes as an
// address but net.ParseIP does not (0x7f.1, 2130706433, 127.1, 0177.0.0.1),
// an IPv6 zone, a name with an '@', a Host that is empty; while every
// spelling of an address and of localhost (case, port, one trailing dot,
// IPv6 literal with and without brackets, IPv4-mapped) passes.
// Promised (package doc): "the Host must be an IP address, localhost or a
// name the server was given (a guard against DNS rebinding)". (Seen, not
// counted: "localhost.:8080.evil" passes, net.SplitHostPort taking
// "8080.evil" for a port; no browser sends a port that is not digits, so a
// rebinding page cannot, and a client that can write any Host can write
// 127.0.0.1.)
func TestAttackHostSpellings(t *testing.T) {
	rule := Rule{Hosts: []string{"devbox.lan"}, Server: "mock", TokenName: "admin token"}
	admit := func(host string) int {
		r := httptest.NewRequest("POST", "/_fgrl/api/reset", nil)
		r.Host, r.RemoteAddr = host, "127.0.0.1:50000"
		status, _ := rule.Admit(r)
		return status
	}
	for _, h := range []string{
		"evil.example", "EVIL.example:8080", "evil.example.", "evil.example..", "localhost.evil.example", "evil-localhost",
		"127.0.0.1.nip.io", "127.0.0.1.evil.example:8080", "localhost..", "0x7f.1", "0x7f000001",
		"2130706433", "127.1", "0177.0.0.1", "[fe80::1%25eth0]:8080", "evil.example@127.0.0.1", "127.0.0.1@evil.example",
		"", ":8080", "devbox.lan.evil.example", "xdevbox.lan", "localhost\x00", "ſocalhost", "localhoſt", "locaLHOST\u212a",
	} {
		if got := admit(h); got != http.StatusForbidden {
			t.Errorf("Host %q admitted (%d), want 403", h, got)
		}
	}
	for _, h := range []string{
		"127.0.0.1", "127.0.0.1:8080", "LOCALHOST", "localhost.:8080", "[::1]:8080", "[::1]", "::1", "[::ffff:127.0.0.1]:80",
		"192.0.2.7:8080", "devbox.lan", "DEVBOX.LAN.:8080",
	} {
		if got := admit(h); got != 0 {
			t.Errorf("Host %q refused (%d), want admitted", h, got)
		}
	}
}

// held: no other site's page may use the endpoints, even from loopback:
// an Origin naming another host (another port of localhost, the same
// address over another scheme's default port, "null", an Origin that
// does not parse, one with the Host as a user name or a path) or
// Sec-Fetch-Site: cross-site is refused whatever else the request says;
// a preflight (OPTIONS with Access-Control-Request-Method) from another
// origin is refused too. Promised (package doc): "no other site's page
// may (a form a web page posts to 127.0.0.1 needs no preflight: its Origin
// names another host, or Sec-Fetch-Site says cross-site)".
func TestAttackCrossSiteRefused(t *testing.T) {
	rule := Rule{Token: "t0k", Server: "mock", TokenName: "admin token"}
	for _, c := range []struct{ method, origin, site string }{
		{"POST", "http://evil.example", ""}, {"POST", "http://localhost:3000", "same-site"}, {"POST", "null", ""},
		{"PUT", "http://127.0.0.1", ""}, {"POST", "https://127.0.0.1:8080.evil.example", ""}, {"POST", "http://127.0.0.1:8080@evil.example", ""},
		{"POST", "http://evil.example/127.0.0.1:8080", ""}, {"POST", "%zz", ""}, {"POST", "127.0.0.1:8080", ""},
		{"DELETE", "", "cross-site"}, {"POST", "http://127.0.0.1:8080", "cross-site"}, {"OPTIONS", "http://evil.example", "cross-site"},
		{"POST", " http://127.0.0.1:8080", ""},
	} {
		r := httptest.NewRequest(c.method, "/_fgrl/api/reset?token=t0k", nil)
		r.Host, r.RemoteAddr = "127.0.0.1:8080", "127.0.0.1:50000"
		r.Header.Set("Authorization", "Bearer t0k")
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.method == "OPTIONS" {
			r.Header.Set("Access-Control-Request-Method", "PUT")
		}
		if status, _ := rule.Admit(r); status != http.StatusForbidden {
			t.Errorf("%s Origin %q Sec-Fetch-Site %q admitted (%d), want 403", c.method, c.origin, c.site, status)
		}
	}
}

// held: a peer off loopback gets in with the token only, presented as
// "Authorization: Bearer <token>" or ?token=: not a near miss (a prefix,
// the token with a suffix, another case of Bearer with a wrong query, the
// token in Proxy-Authorization or a cookie, Basic), and not a RemoteAddr
// that only looks like loopback (127.0.0.1 without a port, a name, an
// IPv4-mapped 127.x is loopback indeed). Promised (package doc): "a peer off
// loopback must present the token as "Authorization: Bearer <token>" or the
// query's token"; "Token admits peers off loopback; "" admits none".
func TestAttackOffLoopbackNeedsToken(t *testing.T) {
	rule := Rule{Token: "s3cr3t-token", Server: "proxy", TokenName: "access token"}
	try := func(remote, auth, query string, hdr map[string]string) int {
		r := httptest.NewRequest("GET", "/_fgrl/api/status"+query, nil)
		r.Host, r.RemoteAddr = "192.0.2.1:3128", remote
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		status, _ := rule.Admit(r)
		return status
	}
	off := "192.0.2.9:4000"
	for _, c := range []struct{ auth, query string }{
		{"", ""}, {"Bearer s3cr3t", ""}, {"Bearer s3cr3t-token-x", ""}, {"Bearer  s3cr3t-token", ""}, {"bearer s3cr3t-token", "?token=x"},
		{"Basic " + "czNjcjN0LXRva2Vu", ""}, {"s3cr3t-token", ""}, {"", "?token=s3cr3t"}, {"", "?Token=s3cr3t-token"},
		{"Bearer x", "?token=s3cr3t-token"},
	} {
		if got := try(off, c.auth, c.query, nil); got != http.StatusUnauthorized {
			t.Errorf("off loopback, Authorization %q, query %q: %d, want 401", c.auth, c.query, got)
		}
	}
	if got := try(off, "", "", map[string]string{"Proxy-Authorization": "Bearer s3cr3t-token", "Cookie": "token=s3cr3t-token",
		"X-Forwarded-For": "127.0.0.1", "Forwarded": "for=127.0.0.1"}); got != http.StatusUnauthorized {
		t.Errorf("the token elsewhere, a forwarded-for loopback: %d, want 401", got)
	}
	for _, remote := range []string{"127.0.0.1", "localhost:80", "[::1]", "", "@"} {
		if got := try(remote, "", "", nil); got != http.StatusUnauthorized {
			t.Errorf("RemoteAddr %q: %d, want 401", remote, got)
		}
	}
	if got := try(off, "Bearer s3cr3t-token", "", nil); got != 0 {
		t.Errorf("the right token: %d", got)
	}
	if got := try("[::ffff:127.0.0.1]:5000", "", "", nil); got != 0 {
		t.Errorf("an IPv4-mapped loopback peer: %d", got)
	}
	none := Rule{Server: "mock", TokenName: "admin token"}
	r := httptest.NewRequest("GET", "/_fgrl/?token=", nil)
	r.Host, r.RemoteAddr = "192.0.2.1", off
	r.Header.Set("Authorization", "Bearer ")
	if status, _ := none.Admit(r); status != http.StatusForbidden {
		t.Errorf("no token set, an empty one presented: %d, want 403", status)
	}
}

// held: over a real connection, a request in absolute form naming a
// rebinding host with "Host: 127.0.0.1" is judged by the host its target
// names (net/http makes it r.Host), and the other way round a request
// whose target is an address but whose Host is a name is judged by the
// address only because no browser sends absolute form to a server that is
// no proxy; either way the reason names no request text.
func TestAttackAbsoluteFormOverTheWire(t *testing.T) {
	rule := Rule{Server: "mock", TokenName: "admin token"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, why := rule.Admit(r); status != 0 {
			http.Error(w, why, status)
			return
		}
		io.WriteString(w, "admitted")
	}))
	defer srv.Close()
	send := func(raw string) (int, string) {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	status, body := send("POST http://rebind.evil.example/_fgrl/api/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
	if status != http.StatusForbidden || strings.Contains(body, "evil") {
		t.Errorf("absolute form to a rebinding name: %d %q, want 403 naming nothing", status, body)
	}
	status, _ = send("POST /_fgrl/api/reset HTTP/1.1\r\nHost: rebind.evil.example\r\nContent-Length: 0\r\n\r\n")
	if status != http.StatusForbidden {
		t.Errorf("origin form, a rebinding Host: %d, want 403", status)
	}
}
