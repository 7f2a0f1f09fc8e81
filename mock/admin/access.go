package admin

import (
	"log/slog"
	"net/http"

	"github.com/xblgo/fgrl/internal/adminaccess"
	"github.com/xblgo/fgrl/internal/safetext"
)

// admit reports why r may not use the admin endpoints: the status and the
// reason, or 0 (adminaccess.Rule, the proxy's too).
func (c *Config) admit(r *http.Request) (int, string) {
	return adminaccess.Rule{Token: c.Token, Hosts: c.Hosts, Server: "mock", TokenName: "admin token"}.Admit(r)
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
