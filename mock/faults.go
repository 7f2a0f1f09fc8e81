package mock

import (
	"cmp"
	"net/http"
	"strconv"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// fault applies the configured faults to an admitted request. It reports
// whether it has answered (or aborted) the request; otherwise it returns the
// writer to serve it with, which may cut the answer short.
func (h *Handler) fault(w http.ResponseWriter, r *http.Request, rule *limits.Rule) (http.ResponseWriter, bool) {
	scope := rule.Scope()
	f := h.faults.Load()
	if done := h.serviceFault(w, r, rule, f); done {
		return w, true
	}
	if f.Latency > 0 {
		t := time.NewTimer(time.Duration(f.Latency))
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

// serviceFault applies the first of the service faults in force for rule,
// and reports whether it has answered (or aborted) the request.
func (h *Handler) serviceFault(w http.ResponseWriter, r *http.Request, rule *limits.Rule, f *Faults) bool {
	now := h.cfg.now()
	for i := range f.Services {
		sf := &f.Services[i]
		if !sf.active(rule, now) || (sf.Rate > 0 && !h.roll(sf.Rate)) {
			continue
		}
		if sf.Latency > 0 {
			t := time.NewTimer(time.Duration(sf.Latency))
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return true
			}
		}
		kind := strconv.Itoa(sf.Status)
		if sf.Reset {
			kind = "reset"
		} else if sf.Status == 0 {
			kind = "latency"
		}
		h.obs.injected(rule.Scope(), kind)
		switch {
		case sf.Reset:
			panic(http.ErrAbortHandler)
		case sf.Status == http.StatusTooManyRequests:
			wait := cmp.Or(time.Duration(sf.RetryAfter), 30*time.Second)
			h.obs.scope(rule.Scope()).throttled.Add(1)
			l := rule.Limit()
			h.write429(w, rule, throttle.Decision{
				Counts:     throttle.Counts{Burst: throttle.WindowState{Count: l.Burst + 1, Limit: l.Burst, Reset: wait}},
				Limiter:    throttle.Burst,
				RetryAfter: wait,
			}, "{userId;titleId}", now)
		case sf.Status != 0:
			if sf.Status == http.StatusServiceUnavailable {
				h.obs.scope(rule.Scope()).unavailable.Add(1)
				if sf.RetryAfter > 0 {
					h.setRetryAfter(w.Header(), time.Duration(sf.RetryAfter), now)
				}
			}
			writeError(w, sf.Status, http.StatusText(sf.Status), "injected service fault")
		default:
			return false // latency only: the mock answers
		}
		return true
	}
	return false
}

// roll reports whether a fault of probability p happens now.
func (h *Handler) roll(p float64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rng.Float64() < p
}
