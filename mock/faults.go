package mock

import (
	"net/http"
	"strconv"
	"time"
)

// fault applies the configured faults to an admitted request. It reports
// whether it has answered (or aborted) the request; otherwise it returns the
// writer to serve it with, which may cut the answer short.
func (h *Handler) fault(w http.ResponseWriter, r *http.Request, scope string) (http.ResponseWriter, bool) {
	f := h.faults.Load()
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return w, true
		}
	}
	if f.ErrorRate <= 0 && f.ResetRate <= 0 && f.TruncateRate <= 0 {
		return w, false
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
		h.obs.scope(scope).unavailable.Add(1)
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected fault")
	case roll < f.ResetRate+f.ErrorRate+f.TruncateRate:
		return &truncWriter{ResponseWriter: w, code: http.StatusOK}, false
	default:
		return w, false
	}
	return w, true
}

// truncWriter holds an answer back, then sends its headers (promising the
// whole body) and half the body, and aborts the connection.
type truncWriter struct {
	http.ResponseWriter
	code int
	body []byte
}

func (t *truncWriter) WriteHeader(code int) { t.code = code }

func (t *truncWriter) Write(b []byte) (int, error) {
	t.body = append(t.body, b...)
	return len(b), nil
}

func (t *truncWriter) cut() {
	w := t.ResponseWriter
	w.Header().Set("Content-Length", strconv.Itoa(len(t.body)))
	w.WriteHeader(t.code)
	w.Write(t.body[:len(t.body)/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}
