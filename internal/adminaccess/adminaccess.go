// Package adminaccess is the one rule of who may use a server's own
// endpoints (the mock's admin API and live page, the proxy's status and
// live page): the Host must be an IP address, localhost or a name the
// server was given (a guard against DNS rebinding); no other site's page
// may (a form a web page posts to 127.0.0.1 needs no preflight: its Origin
// names another host, or Sec-Fetch-Site says cross-site); a peer on
// loopback may; a peer off loopback must present the token as
// "Authorization: Bearer <token>" or the query's token.
package adminaccess

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Rule is one server's access to its own endpoints.
type Rule struct {
	Token     string   // admits peers off loopback; "" admits none
	Hosts     []string // names the endpoints answer to besides IP addresses and localhost
	Server    string   // what the refusals call the server: "mock", "proxy"
	TokenName string   // what they call the token: "admin token", "access token"
}

// Admit reports why r may not use the endpoints: the status and the reason,
// or 0.
func (a Rule) Admit(r *http.Request) (int, string) {
	if !a.hostAllowed(r.Host) {
		return http.StatusForbidden, "the admin endpoints answer to an IP address, localhost or a name the " + a.Server + " was given (DNS rebinding guard), not this Host"
	}
	if crossSite(r) {
		return http.StatusForbidden, "the admin endpoints answer no other site's page (its Origin is not this Host)"
	}
	if LoopbackPeer(r.RemoteAddr) {
		return 0, ""
	}
	if a.Token == "" {
		return http.StatusForbidden, "the admin endpoints answer only to this machine (loopback); start the " + a.Server + " with an " + a.TokenName + " to allow others"
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		tok = r.URL.Query().Get("token")
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.Token)) != 1 {
		return http.StatusUnauthorized, "the admin endpoints need the " + a.TokenName + " (Authorization: Bearer <token>, or ?token=)"
	}
	return 0, ""
}

// crossSite reports whether a browser sent r for another site's page: its
// Origin names another host than r's, or Sec-Fetch-Site says cross-site.
// A request without an Origin (curl, a test suite) is none; nor is one
// the browser calls same-origin (Sec-Fetch-Site, which no page can set),
// whatever its Origin: under a no-referrer policy a page's own PUT says
// "Origin: null".
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site":
		return true
	case "same-origin":
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}

func (a Rule) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if net.ParseIP(strings.Trim(host, "[]")) != nil || host == "localhost" {
		return true
	}
	// A name given fully qualified (its trailing dot) is the same name.
	return slices.ContainsFunc(a.Hosts, func(h string) bool { return strings.EqualFold(strings.TrimSuffix(h, "."), host) })
}

// LoopbackPeer reports whether a request's RemoteAddr is on loopback.
func LoopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
