package mock

import (
	"net/http"
	"time"
)

// fault applies the configured faults to an admitted request and reports
// whether it has answered (or aborted) it.
func (h *Handler) fault(w http.ResponseWriter, r *http.Request) bool {
	f := &h.cfg.faults
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
	}
	if f.ErrorRate <= 0 && f.ResetRate <= 0 {
		return false
	}
	h.mu.Lock()
	roll := h.rng.Float64()
	h.flip = !h.flip
	flip := h.flip
	h.mu.Unlock()
	switch {
	case roll < f.ResetRate:
		// net/http closes the connection without an answer; RoundTrip turns
		// this into a connection-reset error.
		panic(http.ErrAbortHandler)
	case roll < f.ResetRate+f.ErrorRate && flip:
		writeError(w, http.StatusInternalServerError, "InternalError", "injected fault")
	case roll < f.ResetRate+f.ErrorRate:
		h.setRetryAfter(w.Header(), 2*time.Second, h.cfg.now())
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected fault")
	default:
		return false
	}
	return true
}
