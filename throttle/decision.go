package throttle

import (
	"encoding/json"
	"time"
)

// WindowState describes one window of a key: what it has counted, its
// limit and when it ends. Its JSON is {"count", "limit", "reset"}, reset
// a Duration ("12s").
type WindowState struct {
	Count int           // requests counted in the window (at a decision, this one included)
	Limit int           // the limit; 0 means none
	Reset time.Duration // time until the window ends
}

type windowJSON struct {
	Count int      `json:"count"`
	Limit int      `json:"limit"`
	Reset Duration `json:"reset"`
}

// MarshalJSON writes w as {"count", "limit", "reset"}.
func (w WindowState) MarshalJSON() ([]byte, error) {
	return json.Marshal(windowJSON{w.Count, w.Limit, Duration(w.Reset)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (w *WindowState) UnmarshalJSON(b []byte) error {
	var j windowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*w = WindowState{j.Count, j.Limit, time.Duration(j.Reset)}
	return nil
}

// Counts are a key's two windows. It is the one shape of a key's counts:
// a decision (Decision), a budget (Snapshot), the mock's admin API and the
// RateLimit headers (ratelimit.ParseHeaders) all give them so. Its JSON is
// {"burst": ..., "sustain": ...}.
type Counts struct {
	Burst   WindowState `json:"burst"`
	Sustain WindowState `json:"sustain"`
}

// Window returns the window of period p (the zero WindowState for None).
func (c Counts) Window(p Period) WindowState {
	switch p {
	case Burst:
		return c.Burst
	case Sustain:
		return c.Sustain
	}
	return WindowState{}
}

// Decision is the outcome of counting one request.
type Decision struct {
	// Counts are both windows after counting the request.
	Counts
	// Allowed reports whether the request is served.
	Allowed bool
	// Limiter is the limit that refused the request: None when allowed; when
	// both limits are over, the one whose window ends last.
	Limiter Period
	// RetryAfter is the time until the Limiter's window ends; 0 when allowed.
	RetryAfter time.Duration
}

// Decide assembles the decision for a request that found the burst and
// sustain counts over (or not) their limits, given both windows after
// counting it: when both refused it, the limit whose window ends last is the
// Limiter. It is the one place that works this out: a store that keeps the
// windows elsewhere (redisstore's script) reports the counts and calls it.
func Decide(burstOver, sustainOver bool, burst, sustain WindowState) Decision {
	d := Decision{Counts: Counts{Burst: burst, Sustain: sustain}, Allowed: !burstOver && !sustainOver}
	if !d.Allowed {
		d.Limiter = Sustain
		if burstOver && (!sustainOver || burst.Reset > sustain.Reset) {
			d.Limiter = Burst
		}
		d.RetryAfter = d.Window(d.Limiter).Reset
	}
	return d
}
