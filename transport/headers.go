package transport

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/retryafter"
	"github.com/xblgo/fgrl/throttle"
)

// MaxRetryAfter caps the Retry-After the transport honours. FGRL windows last
// at most 300 s, so a longer wait is a fault; it is treated as this cap rather
// than trusted (a huge value would otherwise block a key for days).
const MaxRetryAfter = 10 * time.Minute

// parseRetryAfter reads a Retry-After value, capped at MaxRetryAfter.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	return retryafter.Parse(v, now, MaxRetryAfter)
}

// window is one window a RateLimit header reports.
type window struct {
	period    throttle.Period
	limit     int // from RateLimit-Policy (q), or -1 when absent
	remaining int
	reset     time.Duration
}

// parseRateLimit reads the mock's RateLimit and RateLimit-Policy headers
// ("burst";r=7;t=12, "sustain";r=27;t=290). Unknown names and malformed
// items are skipped; at most two windows are returned.
func parseRateLimit(h http.Header) []window {
	// Canonical keys, read directly: Get would allocate to canonicalize them.
	state := first(h["Ratelimit"])
	if state == "" || len(state) > 1024 {
		return nil
	}
	limits := map[throttle.Period]int{}
	for _, item := range strings.Split(first(h["Ratelimit-Policy"]), ",") {
		if p, params, ok := rateItem(item); ok {
			if q, ok := params["q"]; ok {
				limits[p] = q
			}
		}
	}
	var out []window
	for _, item := range strings.Split(state, ",") {
		p, params, ok := rateItem(item)
		r, okR := params["r"]
		t, okT := params["t"]
		if !ok || !okR || !okT || len(out) == 2 {
			continue
		}
		q, okQ := limits[p]
		if !okQ {
			q = -1
		}
		out = append(out, window{period: p, limit: q, remaining: r, reset: time.Duration(t) * time.Second})
	}
	return out
}

// rateItem parses one `"name";k=v;k=v` item.
func rateItem(item string) (throttle.Period, map[string]int, bool) {
	parts := strings.Split(strings.TrimSpace(item), ";")
	var p throttle.Period
	switch strings.Trim(parts[0], `"`) {
	case "burst":
		p = throttle.Burst
	case "sustain":
		p = throttle.Sustain
	default:
		return 0, nil, false
	}
	params := make(map[string]int, 3)
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 1<<30 {
			return 0, nil, false
		}
		params[k] = n
	}
	return p, params, true
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
