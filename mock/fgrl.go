package mock

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// admit counts the request and reports whether it may be served; when not,
// it has written the answer.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, rule *limits.Rule, id identity, e *logEntry) bool {
	if h.cfg.legacy[id.title] {
		return true
	}
	now := h.cfg.now()
	k := throttle.Key{User: id.userhash, Title: id.title, Scope: rule.Scope()}
	d, err := h.cfg.store.Take(r.Context(), k, rule.Limit(), now)
	if err != nil {
		return h.storeFailed(w, k.Scope, err)
	}
	h.obs.seen(k, rule, now)
	aspect := "{userId;titleId}"
	if rule.PublisherSustain > 0 {
		pk := throttle.Key{User: id.userhash, Title: h.publisher(id.title), Scope: rule.PublisherScope()}
		pd, err := h.cfg.store.Take(r.Context(), pk, throttle.Limit{Sustain: rule.PublisherSustain}, now)
		if err != nil {
			return h.storeFailed(w, k.Scope, err)
		}
		if !pd.Allowed && (d.Allowed || pd.RetryAfter > d.RetryAfter) {
			d, aspect = pd, "{userId;publisherId}"
		}
	}
	if e != nil {
		e.d, e.counted = d, true
	}
	ratelimit.SetHeaders(w.Header(), d)
	if d.Allowed {
		return true
	}
	h.obs.throttle(k, d, now)
	h.write429(w, rule, d, aspect, now)
	return false
}

func (h *Handler) storeFailed(w http.ResponseWriter, scope string, err error) bool {
	h.obs.storeErrors.Add(1)
	if h.cfg.failOpen {
		return true
	}
	h.obs.scope(scope).unavailable.Add(1)
	writeError(w, http.StatusServiceUnavailable, "ThrottleStoreUnavailable", "rate limit store failed: "+err.Error())
	return false
}

func (h *Handler) publisher(title string) string {
	if p, ok := h.cfg.publishers[title]; ok {
		return p
	}
	return title
}

func (h *Handler) write429(w http.ResponseWriter, rule *limits.Rule, d throttle.Decision, aspect string, now time.Time) {
	h.setRetryAfter(w.Header(), d.RetryAfter, now)
	b := ratelimit.BodyOf(d)
	if rule.Store {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(ratelimit.StoreText(b.MaxRequests, b.PeriodInSeconds, aspect)))
		return
	}
	writeJSON(w, http.StatusTooManyRequests, b)
}

// setRetryAfter writes the wait in whole seconds, rounded up, unless a fault
// mode says otherwise.
func (h *Handler) setRetryAfter(hdr http.Header, wait time.Duration, now time.Time) {
	secs := ratelimit.CeilSeconds(wait)
	switch h.faults.Load().RetryAfter {
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
