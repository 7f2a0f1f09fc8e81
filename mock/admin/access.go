package admin

import (
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
)

// admit reports why r may not use the admin endpoints: the status and the
// reason, or 0.
func (c *Config) admit(r *http.Request) (int, string) {
	if !c.hostAllowed(r.Host) {
		return http.StatusForbidden, "the admin endpoints answer to an IP address, localhost or a name the mock was given (DNS rebinding guard), not this Host"
	}
	if loopbackPeer(r.RemoteAddr) {
		return 0, ""
	}
	if c.Token == "" {
		return http.StatusForbidden, "the admin endpoints answer only to this machine (loopback); start the mock with an admin token to allow others"
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		tok = r.URL.Query().Get("token")
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(c.Token)) != 1 {
		return http.StatusUnauthorized, "the admin endpoints need the admin token (Authorization: Bearer <token>, or ?token=)"
	}
	return 0, ""
}

func (c *Config) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if net.ParseIP(strings.Trim(host, "[]")) != nil || host == "localhost" {
		return true
	}
	return slices.ContainsFunc(c.Hosts, func(h string) bool { return strings.EqualFold(h, host) })
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

// logRefusal logs a request the admin endpoints refused, with its peer:
// someone tried them who may not.
func (c *Config) logRefusal(r *http.Request, status int) {
	if c.Logger == nil {
		return
	}
	c.Logger.LogAttrs(r.Context(), slog.LevelWarn, "admin request refused",
		slog.String("method", safetext.Clip(r.Method, 16)),
		slog.String("host", safetext.Clip(r.Host, 100)),
		slog.String("path", safetext.Clip(r.URL.Path, 200)),
		slog.String("peer", safetext.Clip(r.RemoteAddr, 100)),
		slog.Int("status", status))
}
