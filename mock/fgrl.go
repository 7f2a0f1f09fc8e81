package mock

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// admit counts the request and reports whether it may be served; when not,
// it has written the answer.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, rule *limits.Rule, id identity) bool {
	if h.cfg.legacy[id.title] {
		return true
	}
	now := h.cfg.now()
	k := throttle.Key{User: id.xuid, Title: id.title, Scope: rule.Scope()}
	d, err := h.cfg.store.Take(r.Context(), k, rule.Limit(), now)
	if err != nil {
		return h.storeFailed(w, err)
	}
	aspect := "{userId;titleId}"
	if rule.PublisherSustain > 0 {
		pk := throttle.Key{User: id.xuid, Title: h.publisher(id.title), Scope: rule.PublisherScope()}
		pd, err := h.cfg.store.Take(r.Context(), pk, throttle.Limit{Sustain: rule.PublisherSustain}, now)
		if err != nil {
			return h.storeFailed(w, err)
		}
		if !pd.Allowed && (d.Allowed || pd.RetryAfter > d.RetryAfter) {
			d, aspect = pd, "{userId;publisherId}"
		}
	}
	setRateLimit(w.Header(), d)
	if d.Allowed {
		return true
	}
	h.write429(w, rule, d, aspect, now)
	return false
}

func (h *Handler) storeFailed(w http.ResponseWriter, err error) bool {
	if h.cfg.failOpen {
		return true
	}
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
	if rule.Store {
		b := d.Body()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(throttle.StoreText(b.MaxRequests, b.PeriodInSeconds, aspect)))
		return
	}
	writeJSON(w, http.StatusTooManyRequests, d.Body())
}

// setRetryAfter writes the wait in whole seconds, rounded up, unless a fault
// mode says otherwise.
func (h *Handler) setRetryAfter(hdr http.Header, wait time.Duration, now time.Time) {
	secs := ceilSeconds(wait)
	switch h.cfg.faults.RetryAfter {
	case RetryAfterMissing:
		return
	case RetryAfterHTTPDate:
		hdr.Set("Retry-After", now.Add(time.Duration(secs)*time.Second).UTC().Format(http.TimeFormat))
	case RetryAfterHuge:
		hdr.Set("Retry-After", strconv.FormatInt(math.MaxInt32, 10))
	case RetryAfterNegative:
		hdr.Set("Retry-After", "-"+strconv.FormatInt(secs, 10))
	case RetryAfterGarbage:
		hdr.Set("Retry-After", "soon")
	default:
		hdr.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
}

func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// setRateLimit writes the RateLimit-Policy and RateLimit headers for both
// windows (the package doc describes them).
func setRateLimit(hdr http.Header, d throttle.Decision) {
	var policy, state []string
	for _, w := range []struct {
		name   string
		period time.Duration
		s      throttle.WindowState
	}{{"burst", throttle.BurstPeriod, d.Burst}, {"sustain", throttle.SustainPeriod, d.Sustain}} {
		if w.s.Limit <= 0 {
			continue
		}
		policy = append(policy, `"`+w.name+`";q=`+strconv.Itoa(w.s.Limit)+";w="+strconv.Itoa(int(w.period/time.Second)))
		state = append(state, `"`+w.name+`";r=`+strconv.Itoa(max(0, w.s.Limit-w.s.Count))+";t="+strconv.FormatInt(ceilSeconds(w.s.Reset), 10))
	}
	if len(policy) > 0 {
		hdr.Set("RateLimit-Policy", strings.Join(policy, ", "))
		hdr.Set("RateLimit", strings.Join(state, ", "))
	}
}
