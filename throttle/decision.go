package throttle

import "time"

// WindowState describes one window of a key at the time of a decision.
type WindowState struct {
	Count int           // requests counted in the window, this one included
	Limit int           // the limit; 0 means none
	Reset time.Duration // time until the window ends
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

func (d *Decision) window(p Period) WindowState {
	if p == Burst {
		return d.Burst
	}
	return d.Sustain
}

// Body returns the 429 body that describes d (SPEC §2): the Limiter's counts
// and period, with limitType "Rate". For an allowed decision it describes the
// sustain window.
func (d Decision) Body() Body {
	p := d.Limiter
	if p == None {
		p = Sustain
	}
	w := d.window(p)
	return Body{
		Version:         1,
		CurrentRequests: w.Count,
		MaxRequests:     w.Limit,
		PeriodInSeconds: int(p.Duration() / time.Second),
		LimitType:       "Rate",
	}
}
