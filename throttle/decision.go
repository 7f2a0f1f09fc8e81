package throttle

import "time"

// WindowState describes one window of a key at the time of a decision. Its
// JSON (the mock's admin API) is {"count", "limit", "resetNs"}.
type WindowState struct {
	Count int           `json:"count"`   // requests counted in the window, this one included
	Limit int           `json:"limit"`   // the limit; 0 means none
	Reset time.Duration `json:"resetNs"` // time until the window ends
}

// Decision is the outcome of counting one request.
type Decision struct {
	// Allowed reports whether the request is served.
	Allowed bool
	// Burst and Sustain are both windows after counting the request.
	Burst, Sustain WindowState
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
	d := Decision{Allowed: !burstOver && !sustainOver, Burst: burst, Sustain: sustain}
	if !d.Allowed {
		d.Limiter = Sustain
		if burstOver && (!sustainOver || burst.Reset > sustain.Reset) {
			d.Limiter = Burst
		}
		d.RetryAfter = d.window(d.Limiter).Reset
	}
	return d
}

func (d *Decision) window(p Period) WindowState {
	if p == Burst {
		return d.Burst
	}
	return d.Sustain
}
