package proxy

import (
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/xblgo/fgrl/internal/adminaccess"
)

// admitProxy reports why r may not use the proxy: the status and the
// reason, or 0. Loopback peers may; others must present the token in
// Proxy-Authorization.
func (s *Server) admitProxy(r *http.Request) (int, string) {
	if adminaccess.LoopbackPeer(r.RemoteAddr) {
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

// admitAdmin reports why r may not use the admin endpoints, by the rule
// the mock's admin endpoints follow too (adminaccess.Rule).
func (s *Server) admitAdmin(r *http.Request) (int, string) {
	return adminaccess.Rule{Token: s.cfg.Token, Hosts: s.cfg.AdminHosts, Server: "proxy", TokenName: "access token"}.Admit(r)
}
