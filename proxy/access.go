package proxy

import (
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"slices"
	"strings"
)

// admitProxy reports why r may not use the proxy: the status and the
// reason, or 0. Loopback peers may; others must present the token in
// Proxy-Authorization.
func (s *Server) admitProxy(r *http.Request) (int, string) {
	if loopbackPeer(r.RemoteAddr) {
		return 0, ""
	}
	if s.cfg.Token == "" {
		return http.StatusForbidden, "the proxy serves only this machine (loopback); start it with an access token to serve others"
	}
	if !s.tokenIs(proxyToken(r.Header.Get("Proxy-Authorization"))) {
		return http.StatusProxyAuthRequired, "the proxy needs its access token: HTTPS_PROXY=http://fgrl:<token>@<address>"
	}
	return 0, ""
}

// proxyToken is the token of a Proxy-Authorization value: a Basic one's
// password, or a Bearer one's token.
func proxyToken(v string) string {
	scheme, rest, _ := strings.Cut(v, " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return strings.TrimSpace(rest)
	case strings.EqualFold(scheme, "Basic"):
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
		if err != nil {
			return ""
		}
		_, password, _ := strings.Cut(string(b), ":")
		return password
	}
	return ""
}

// tokenIs reports, in constant time, whether tok is the access token.
func (s *Server) tokenIs(tok string) bool {
	return s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

// admitAdmin reports why r may not use the admin endpoints, as
// mock.AdminAccess does: the Host must be an IP address, localhost or an
// AdminHosts name (a guard against DNS rebinding); a peer off loopback must
// present the token as "Authorization: Bearer <token>" or the query's
// token.
func (s *Server) admitAdmin(r *http.Request) (int, string) {
	if !s.adminHost(r.Host) {
		return http.StatusForbidden, "the admin endpoints answer to an IP address, localhost or a name the proxy was given (DNS rebinding guard), not this Host"
	}
	if loopbackPeer(r.RemoteAddr) {
		return 0, ""
	}
	if s.cfg.Token == "" {
		return http.StatusForbidden, "the admin endpoints answer only to this machine (loopback); start the proxy with an access token to allow others"
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		tok = r.URL.Query().Get("token")
	}
	if !s.tokenIs(tok) {
		return http.StatusUnauthorized, "the admin endpoints need the access token (Authorization: Bearer <token>, or ?token=)"
	}
	return 0, ""
}

func (s *Server) adminHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = hostName(host)
	if net.ParseIP(strings.Trim(host, "[]")) != nil || host == "localhost" {
		return true
	}
	return slices.ContainsFunc(s.cfg.AdminHosts, func(h string) bool { return strings.EqualFold(h, host) })
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
