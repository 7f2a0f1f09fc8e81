package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/throttle"
)

// AdminPrefix starts the paths of the live page and the admin API.
const AdminPrefix = "/_fgrl/"

// Admin returns the mock's own endpoints, for a server that also serves the
// Handler (xblcall mock serves both on one address):
//
//	GET    /metrics                 metrics, when not nil (mockprom.Handler(h): Prometheus's requests, 429s and 503s by scope, keys, store errors)
//	GET    /_fgrl/                  the live page: every key's counts against its limits, recent 429s, faults
//	GET    /_fgrl/events            the page's data, as server-sent events (one snapshot a second)
//	GET    /_fgrl/api/keys          the keys counted lately, with their counts (the snapshot's keys)
//	GET    /_fgrl/api/keys?user=U&title=T&scope=S   one key's counts (xuid=X instead of user: its userhash)
//	DELETE /_fgrl/api/keys?user=U&title=T&scope=S   forget one key's counts
//	DELETE /_fgrl/api/keys          forget every key's counts
//	GET    /_fgrl/api/faults        the faults in force (Faults as JSON)
//	PUT    /_fgrl/api/faults        set them
//
// Errors are JSON {"error": "..."} with a 4xx status. access says who may
// use them (AdminAccess{}: loopback peers only). The metrics exporter is a
// parameter so that a program importing mock for its tests does not import
// a metrics library. Nothing runs until a
// request comes: the Handler stays goroutine-free. An event stream ends when
// its request's context does: a server that shuts down gracefully ends its
// streams by cancelling its BaseContext (see xblcall mock).
func (h *Handler) Admin(access AdminAccess, metrics http.Handler) http.Handler {
	mux := h.adminMux(metrics)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, why := access.admit(r); status != 0 {
			logAdminRefusal(h.cfg.logger, r, status)
			writeJSON(w, status, apiError{why})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// WithAdmin returns a handler that serves both the services (h) and the
// mock's own endpoints (Admin(access, metrics)) on one address, as xblcall
// mock does: a request whose path IsAdmin goes to the latter.
func (h *Handler) WithAdmin(access AdminAccess, metrics http.Handler) http.Handler {
	admin := h.Admin(access, metrics)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsAdmin(r) {
			admin.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (h *Handler) adminMux(metrics http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	mux.HandleFunc("GET "+AdminPrefix+"{$}", h.servePage)
	mux.HandleFunc("GET "+AdminPrefix+"events", h.serveEvents)
	mux.HandleFunc("GET "+AdminPrefix+"api/keys", h.apiKeys)
	mux.HandleFunc("DELETE "+AdminPrefix+"api/keys", h.apiReset)
	mux.HandleFunc("GET "+AdminPrefix+"api/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, h.Faults())
	})
	mux.HandleFunc("PUT "+AdminPrefix+"api/faults", h.apiSetFaults)
	mux.HandleFunc("DELETE "+AdminPrefix+"api/faults", func(w http.ResponseWriter, _ *http.Request) {
		h.SetFaults(Faults{}) // no faults always check
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+AdminPrefix+"api/world", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, h.World())
	})
	mux.HandleFunc("PUT "+AdminPrefix+"api/world", h.apiSetWorld)
	mux.HandleFunc("DELETE "+AdminPrefix+"api/world", func(w http.ResponseWriter, _ *http.Request) {
		h.SetWorld(World{}) // the default world always checks
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+AdminPrefix+"api/calls", func(w http.ResponseWriter, r *http.Request) { h.exportCalls(w, r, false) })
	mux.HandleFunc("GET "+AdminPrefix+"api/calls.har", func(w http.ResponseWriter, r *http.Request) { h.exportCalls(w, r, true) })
	mux.HandleFunc("DELETE "+AdminPrefix+"api/calls", func(w http.ResponseWriter, _ *http.Request) {
		h.ForgetCalls()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST "+AdminPrefix+"api/check", h.apiCheck)
	mux.HandleFunc("GET "+AdminPrefix+"api/script", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, h.Script())
	})
	mux.HandleFunc("PUT "+AdminPrefix+"api/script", h.apiSetScript)
	mux.HandleFunc("DELETE "+AdminPrefix+"api/script", func(w http.ResponseWriter, _ *http.Request) {
		h.SetScript(Script{}) // no script always checks
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST "+AdminPrefix+"api/world/reset", func(w http.ResponseWriter, _ *http.Request) {
		h.ResetWorld()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// IsAdmin reports whether a request is for Admin's endpoints rather than a
// service: its path is /metrics or starts with AdminPrefix.
func IsAdmin(r *http.Request) bool {
	return r.URL.Path == "/metrics" || strings.HasPrefix(r.URL.Path, AdminPrefix)
}

func (h *Handler) apiKeys(w http.ResponseWriter, r *http.Request) {
	if !namesKey(r) {
		writeJSON(w, http.StatusOK, h.Overview(r.Context()).Keys)
		return
	}
	k, err := keyOf(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	d, err := h.Counts(k)
	if err != nil {
		writeJSON(w, http.StatusNotFound, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, KeyCounts{User: k.User, Title: k.Title, Scope: k.Scope, Counts: d.Counts})
}

func (h *Handler) apiReset(w http.ResponseWriter, r *http.Request) {
	var k *throttle.Key
	if namesKey(r) {
		key, err := keyOf(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
			return
		}
		k = &key
	}
	switch err := h.ResetCounts(r.Context(), k); {
	case errors.Is(err, ErrCannotReset):
		writeJSON(w, http.StatusNotImplemented, apiError{"the counts' store cannot forget keys"})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, apiError{"reset failed: " + safetext.Clip(err.Error(), 200)})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// namesKey reports whether the query names a key (else it means all).
func namesKey(r *http.Request) bool {
	q := r.URL.Query()
	return q.Has("user") || q.Has("xuid") || q.Has("title") || q.Has("scope")
}

// keyOf reads a key from the query: user (a userhash) or xuid, title and
// scope.
func keyOf(r *http.Request) (throttle.Key, error) {
	q := r.URL.Query()
	k := throttle.Key{User: q.Get("user"), Title: q.Get("title"), Scope: q.Get("scope")}
	if x := q.Get("xuid"); x != "" {
		if k.User != "" {
			return k, errors.New("give user (a userhash) or xuid, not both")
		}
		if err := xblid.CheckXUID(x); err != nil {
			return k, fmt.Errorf("xuid: %w", err)
		}
		k.User = UserHash(x)
	}
	if k.User == "" || k.Title == "" || k.Scope == "" {
		return k, errors.New("a key needs user (or xuid), title and scope")
	}
	return k, nil
}

// apiSetFaults changes the faults by the fields the body names; the others
// keep their values (a list, services, is replaced whole when named).
func (h *Handler) apiSetFaults(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	var named map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(body, &named)
	}
	f := h.Faults()
	old := f.Services
	f.Services = nil
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&f)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{"faults: " + decodeReason(err)})
		return
	}
	if _, ok := named["services"]; !ok {
		f.Services = old
	}
	if err := h.SetFaults(f); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, h.Faults())
}

// apiSetWorld seeds the world from the request's body, a world file; a
// malformed one is refused with 400 naming the line and field, the world
// unchanged.
func (h *Handler) apiSetWorld(w http.ResponseWriter, r *http.Request) {
	world, err := ReadWorld(r.Body)
	if err == nil {
		err = h.SetWorld(world)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, h.World())
}

// apiSetScript sets the script in the request's body (JSON or YAML); a
// script that cannot be is refused with 400 naming the line and field, the
// script unchanged.
func (h *Handler) apiSetScript(w http.ResponseWriter, r *http.Request) {
	s, err := ReadScript(r.Body)
	if err == nil {
		err = h.SetScript(s)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, h.Script())
}

// apiCheck runs Check with the options in the body: 200 when it passes,
// 422 with the failures when it does not (so curl --fail fails).
func (h *Handler) apiCheck(w http.ResponseWriter, r *http.Request) {
	var o CheckOptions
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil && err != io.EOF {
		writeJSON(w, http.StatusBadRequest, apiError{"check: " + decodeReason(err)})
		return
	}
	res, err := h.Check(o)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{"check: " + safetext.Clip(err.Error(), 200)})
		return
	}
	status := http.StatusOK
	if !res.OK {
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, res)
}

type apiError struct {
	Error string `json:"error"`
}

// Bounds on the live page's event streams.
const (
	maxStreams = 16 // open at once; more are refused with 503
)

// liveFeed is the event streams' shared state: how many are open, and the
// snapshot of this tick, encoded once for all of them.
type liveFeed struct {
	streams atomic.Int32

	mu   sync.Mutex
	at   time.Time // when data was encoded (runtime clock)
	data []byte
}

// snapshotJSON returns the snapshot encoded at most a tick ago, encoding a
// new one when that is older: one snapshot a tick however many pages watch.
func (h *Handler) snapshotJSON(ctx context.Context) ([]byte, error) {
	f := &h.live
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := time.Now(); f.data == nil || now.Sub(f.at) >= tick*9/10 {
		b, err := json.Marshal(h.Overview(ctx))
		if err != nil {
			return nil, err
		}
		f.data, f.at = b, now
	}
	return f.data, nil
}

// tick is how often an event stream sends a snapshot.
const tick = time.Second

// serveEvents streams a snapshot a second until the client goes away or the
// request's context ends (the server shutting down).
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	if h.live.streams.Add(1) > maxStreams {
		h.live.streams.Add(-1)
		writeJSON(w, http.StatusServiceUnavailable, apiError{fmt.Sprintf("%d live pages are open already; close one", maxStreams)})
		return
	}
	defer h.live.streams.Add(-1)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		b, err := h.snapshotJSON(r.Context())
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// decodeReason is a JSON decoder's error up to the first input it quotes,
// so no fragment of a request's body reaches the answer.
func decodeReason(err error) string {
	return safetext.Reason(strings.TrimPrefix(err.Error(), "json: "), 120)
}

// logAdminRefusal logs a request the admin endpoints refused (AdminAccess),
// with its peer: someone tried them who may not.
func logAdminRefusal(log *slog.Logger, r *http.Request, status int) {
	if log == nil {
		return
	}
	log.LogAttrs(r.Context(), slog.LevelWarn, "admin request refused",
		slog.String("method", safetext.Clip(r.Method, 16)),
		slog.String("host", safetext.Clip(r.Host, 100)),
		slog.String("path", safetext.Clip(r.URL.Path, 200)),
		slog.String("peer", safetext.Clip(r.RemoteAddr, 100)),
		slog.Int("status", status))
}
