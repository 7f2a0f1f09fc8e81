package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// refuse answers a call the transport refused as the service answers one
// it throttles, and returns the status: te's (429, or the status a cached
// Retry-After fails calls fast with), Retry-After te's wait, and for a 429
// the RateLimit headers and FGRL's JSON body, both written by package
// ratelimit from the key's budget (a refusal by the service keeps the
// service's body). A local refusal is marked with HeaderRefused: local.
func (s *Server) refuse(w http.ResponseWriter, c *call, te *transport.ThrottleError) int {
	h := w.Header()
	h.Set("Retry-After", ratelimit.RetryAfter(te.Wait))
	if te.Local {
		h.Set(HeaderRefused, "local")
	}
	if te.Status != http.StatusTooManyRequests {
		plain(w, nil, te.Status, fmt.Sprintf("proxy: refused locally: the service answered %d with a Retry-After for this user and service; "+
			"retry after %v", te.Status, te.Wait))
		return te.Status
	}
	d := s.decision(c, te)
	ratelimit.SetHeaders(h, d)
	body := ratelimit.BodyOf(d)
	if !te.Local && te.Body != nil {
		body = *te.Body
	}
	b, _ := json.Marshal(body) // a Body always marshals
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(b)
	return http.StatusTooManyRequests
}

// decision is the refusal as the budget of the call's key has it now: its
// windows, the one that is full, and te's wait.
func (s *Server) decision(c *call, te *transport.ThrottleError) throttle.Decision {
	var snap throttle.Snapshot
	if c.counted {
		snap, _ = s.tr.Snapshot(c.key) // an error: no windows to report, the wait still is
	}
	over := func(w throttle.WindowState) bool { return w.Limit > 0 && w.Count >= w.Limit }
	d := throttle.Decide(over(snap.Burst), over(snap.Sustain), snap.Burst, snap.Sustain)
	d.Allowed, d.RetryAfter = false, te.Wait
	return d
}
