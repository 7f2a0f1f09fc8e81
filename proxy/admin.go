package proxy

import (
	_ "embed"
	"net/http"
	"strings"
)

// AdminPrefix starts the paths of the proxy's live page and admin API, as
// the mock's (mock.AdminPrefix).
const AdminPrefix = "/_fgrl/"

// The admin endpoints, on the proxy's own port, for requests in origin
// form (GET /_fgrl/ HTTP/1.1), to loopback peers or with the access token
// (Config.Token):
//
//	GET /_fgrl/             the live page: every key's budget, the learned limits, the counters (refreshed each second)
//	GET /_fgrl/api/status   the same as JSON (Status)
//	GET /metrics            Config.Metrics, when set
//
// Errors are plain text with a 4xx status.
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.cfg.Metrics)
	}
	mux.HandleFunc("GET "+AdminPrefix+"{$}", servePage)
	mux.HandleFunc("GET "+AdminPrefix+"api/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(s.statusJSON())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, why := s.admitAdmin(r); status != 0 {
			plain(w, r, status, "proxy: "+why)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// isAdmin reports whether a request in origin form is for the admin
// endpoints.
func isAdmin(r *http.Request) bool {
	return r.URL.Path == "/metrics" || strings.HasPrefix(r.URL.Path, AdminPrefix)
}

// pageHTML is the live page: one file, no external asset; it reads
// api/status each second.
//
//go:embed page.html
var pageHTML []byte

func servePage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
	w.Write(pageHTML)
}
