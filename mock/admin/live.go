package admin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// pageHTML is the live page: one file, no external asset; it reads
// /_fgrl/events.
//
//go:embed page.html
var pageHTML []byte

func (a *admin) page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// No other page may frame it (clickjacking its fault buttons): a
	// navigation carries no Origin for the access rule to refuse.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Write(pageHTML)
}

// Bounds on the live page's event streams.
const (
	maxStreams = 16          // open at once; more are refused with 503
	tick       = time.Second // how often a stream sends the overview
)

// overviewJSON returns the mock's overview encoded at most a tick ago,
// encoding a new one when that is older: one overview a tick however many
// pages watch.
func (a *admin) overviewJSON(ctx context.Context) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if now := time.Now(); a.data == nil || now.Sub(a.at) >= tick*9/10 {
		b, err := json.Marshal(a.h.Overview(ctx))
		if err != nil {
			return nil, err
		}
		a.data, a.at = b, now
	}
	return a.data, nil
}

// events streams the overview once a tick until the client goes away or
// the request's context ends (the server shutting down).
func (a *admin) events(w http.ResponseWriter, r *http.Request) {
	if a.streams.Add(1) > maxStreams {
		a.streams.Add(-1)
		writeJSON(w, http.StatusServiceUnavailable, apiError{fmt.Sprintf("%d live pages are open already; close one", maxStreams)})
		return
	}
	defer a.streams.Add(-1)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		b, err := a.overviewJSON(r.Context())
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
