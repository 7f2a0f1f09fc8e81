package mock

import (
	"cmp"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// dice are the fault dice: a generator seeded by Faults.Seed, and the flip
// that alternates injected errors between 500 and 503.
type dice struct {
	mu   sync.Mutex
	rng  *rand.Rand
	flip bool
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// restart starts the dice again from seed: its rolls and the 500/503
// alternation, so that a run under the same seed is repeated. The caller
// holds d.mu.
func (d *dice) restart(seed uint64) {
	d.rng, d.flip = newRand(seed), false
}

// roll reports whether a fault of probability p happens now.
func (d *dice) roll(p float64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rng.Float64() < p
}

// fault is the faults' stage: it applies f to c, an admitted request for
// rule, and reports whether it has answered (or aborted) c; otherwise c.w
// may now cut the answer short.
func (h *Handler) fault(x *exchange, rule *limits.Rule, f *Faults) bool {
	if h.serviceFault(x, rule, f) {
		return true
	}
	if f.Latency > 0 && !wait(x.r, time.Duration(f.Latency)) {
		return true
	}
	if f.ErrorRate <= 0 && f.ResetRate <= 0 && f.TruncateRate <= 0 {
		return false
	}
	h.dice.mu.Lock()
	roll := h.dice.rng.Float64()
	flip := h.dice.flip
	if failed := roll >= f.ResetRate && roll < f.ResetRate+f.ErrorRate; failed {
		h.dice.flip = !flip // the errors alternate, whatever is served between them
		flip = h.dice.flip
	}
	h.dice.mu.Unlock()
	switch {
	case roll < f.ResetRate:
		// net/http closes the connection without an answer; RoundTrip turns
		// this into a connection-reset error.
		panic(http.ErrAbortHandler)
	case roll < f.ResetRate+f.ErrorRate && flip:
		writeError(x.w, http.StatusInternalServerError, "InternalError", "injected fault")
	case roll < f.ResetRate+f.ErrorRate:
		setRetryAfter(h.faults.Load().f.RetryAfter, x.w.Header(), 2*time.Second, h.cfg.now())
		x.flags |= unavailable
		writeError(x.w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected fault")
	case roll < f.ResetRate+f.ErrorRate+f.TruncateRate:
		x.w = &truncWriter{ResponseWriter: x.w, code: http.StatusOK}
		return false
	default:
		return false
	}
	return true
}

// wait waits d, and reports false when r's context ends first.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// serviceFault applies the first of the service faults in force for rule,
// and reports whether it has answered (or aborted) c.
func (h *Handler) serviceFault(x *exchange, rule *limits.Rule, f *Faults) bool {
	now := h.cfg.now()
	for i := range f.Services {
		sf := &f.Services[i]
		if !sf.active(rule, now) || (sf.Rate > 0 && !h.dice.roll(sf.Rate)) {
			continue
		}
		if sf.Latency > 0 && !wait(x.r, time.Duration(sf.Latency)) {
			return true
		}
		x.fault = kindOf(sf)
		switch {
		case sf.Reset:
			panic(http.ErrAbortHandler)
		case sf.Status == http.StatusTooManyRequests:
			wait := cmp.Or(time.Duration(sf.RetryAfter), 30*time.Second)
			l := rule.Limit()
			h.write429(x.w, rule, throttle.Decision{
				Counts:     throttle.Counts{Burst: throttle.WindowState{Count: l.Burst + 1, Limit: l.Burst, Reset: wait}},
				Limiter:    throttle.Burst,
				RetryAfter: wait,
			}, ratelimit.AspectTitle, now)
		case sf.Status != 0:
			if sf.Status == http.StatusServiceUnavailable {
				x.flags |= unavailable
				if sf.RetryAfter > 0 {
					setRetryAfter(h.faults.Load().f.RetryAfter, x.w.Header(), time.Duration(sf.RetryAfter), now)
				}
			}
			writeError(x.w, sf.Status, http.StatusText(sf.Status), "injected service fault")
		default:
			return false // latency only: the mock answers
		}
		return true
	}
	return false
}

// setRetryAfter writes the wait in whole seconds, rounded up, unless a fault
// mode says otherwise.
func setRetryAfter(mode RetryAfterMode, hdr http.Header, wait time.Duration, now time.Time) {
	secs := ratelimit.CeilSeconds(wait)
	switch mode {
	case RetryAfterMissing:
		return
	case RetryAfterHTTPDate:
		hdr.Set("Retry-After", ratelimit.RetryAfterDate(now.Add(time.Duration(secs)*time.Second)))
	case RetryAfterHuge:
		hdr.Set("Retry-After", strconv.FormatInt(math.MaxInt32, 10))
	case RetryAfterNegative:
		hdr.Set("Retry-After", "-"+strconv.FormatInt(secs, 10))
	case RetryAfterGarbage:
		hdr.Set("Retry-After", "soon")
	default:
		hdr.Set("Retry-After", ratelimit.RetryAfter(wait))
	}
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
