package mock

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// logEntry is what serve learnt of one request, for Config.Logger and
// the record of calls.
type logEntry struct {
	scope, user, title string // user: the userhash
	xuid, script       string
	d                  throttle.Decision
	counted            bool
}

func (h *Handler) logRequest(r *http.Request, e *logEntry, status int, aborted bool, took time.Duration) {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("method", safetext.Clip(r.Method, 16)),
		slog.String("host", safetext.Clip(r.Host, 100)),
		slog.String("path", safetext.Clip(r.URL.Path, 200)),
		slog.Int("status", status))
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	if e.scope != "" {
		attrs = append(attrs, slog.String("scope", e.scope), slog.String("user", e.user), slog.String("title", e.title))
	}
	if e.counted {
		attrs = append(attrs,
			slog.Int("burst", e.d.Burst.Count), slog.Int("burstLimit", e.d.Burst.Limit),
			slog.Int("sustain", e.d.Sustain.Count), slog.Int("sustainLimit", e.d.Sustain.Limit))
	}
	attrs = append(attrs, slog.Float64("tookMs", float64(took.Microseconds())/1000)) // a unit in the name, in text and JSON
	h.cfg.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

// statusWriter notes the status an answer was given.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush passes through, for the truncation fault.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logAdminRefusal logs a request the admin endpoints refused (AdminAccess),
// with its peer: someone tried them who may not.
func (h *Handler) logAdminRefusal(r *http.Request, status int) {
	if h.cfg.logger == nil {
		return
	}
	h.cfg.logger.LogAttrs(r.Context(), slog.LevelWarn, "admin request refused",
		slog.String("method", safetext.Clip(r.Method, 16)),
		slog.String("host", safetext.Clip(r.Host, 100)),
		slog.String("path", safetext.Clip(r.URL.Path, 200)),
		slog.String("peer", safetext.Clip(r.RemoteAddr, 100)),
		slog.Int("status", status))
}
