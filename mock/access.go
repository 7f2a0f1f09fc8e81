package mock

import (
	"crypto/subtle"
	"net"
	"net/http"
	"slices"
	"strings"
)

// AdminAccess says who may use the admin endpoints (Admin). Its zero value
// admits only requests from loopback peers.
//
// Every request must name the mock in its Host header by an IP address,
// "localhost" or one of Hosts: a web page that rebinds its own name to
// 127.0.0.1 (DNS rebinding) sends that name and is refused. A peer that is
// not on loopback must present Token, as "Authorization: Bearer <token>" or
// as the query parameter token (what the live page passes on to its event
// stream); with no Token set, such peers are refused.
type AdminAccess struct {
	// Token admits peers that are not on loopback. Empty: none is.
	Token string
	// Hosts are further names the Host header may carry (the machine's name,
	// a container's network alias).
	Hosts []string
}

// admit reports why r may not use the admin endpoints: the status and the
// reason, or 0.
func (a AdminAccess) admit(r *http.Request) (int, string) {
	if !a.hostAllowed(r.Host) {
		return http.StatusForbidden, "the admin endpoints answer to an IP address, localhost or a name the mock was given (DNS rebinding guard), not this Host"
	}
	if loopbackPeer(r.RemoteAddr) {
		return 0, ""
	}
	if a.Token == "" {
		return http.StatusForbidden, "the admin endpoints answer only to this machine (loopback); start the mock with an admin token to allow others"
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		tok = r.URL.Query().Get("token")
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.Token)) != 1 {
		return http.StatusUnauthorized, "the admin endpoints need the admin token (Authorization: Bearer <token>, or ?token=)"
	}
	return 0, ""
}

func (a AdminAccess) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if net.ParseIP(strings.Trim(host, "[]")) != nil || host == "localhost" {
		return true
	}
	return slices.ContainsFunc(a.Hosts, func(h string) bool { return strings.EqualFold(h, host) })
}

// loopbackPeer reports whether a request's RemoteAddr is on loopback.
func loopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
