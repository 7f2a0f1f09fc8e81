package throttle

import (
	"math"
	"time"
)

// fixedWindows is the server-side FGRL state of one key: a fixed burst window and a
// fixed sustain window, each with its start and the requests counted in it.
// The zero value has no open window. fixedWindows is a plain value: it is not safe
// for concurrent use; MemoryServerStore guards one per key.
//
// Take applies the rule of the Xbox services "Fine-Grained Rate Limiting" page: a request is refused when either count is
// already at or over its limit, and every request, refused or not, increments
// both counts.
type fixedWindows struct {
	burstStart   int64 // an instant (sliding.go); meaningful when burstCount > 0
	sustainStart int64
	burstCount   int32
	sustainCount int32
}

// Align chooses where a new window starts.
type Align uint8

const (
	// FirstRequest starts each window at the first request counted after the
	// previous window of its kind ended (the INCR-then-EXPIRE pattern). It is
	// the default.
	FirstRequest Align = iota
	// ClockAligned starts windows at multiples of their period since the Unix epoch.
	ClockAligned
)

// Take counts one request at now against l and returns the decision.
func (w *fixedWindows) Take(now time.Time, l Limit, a Align) Decision {
	t := instant(now)
	w.roll(t, a)
	burstOver := l.Burst > 0 && int(w.burstCount) >= l.Burst
	sustainOver := l.Sustain > 0 && int(w.sustainCount) >= l.Sustain
	w.burstCount = satInc(w.burstCount)
	w.sustainCount = satInc(w.sustainCount)
	d := w.decision(t, l)
	return Decide(burstOver, sustainOver, d.Burst, d.Sustain)
}

// Peek returns the counts at now without counting a request. Allowed reports
// whether a request at now would be served.
func (w *fixedWindows) Peek(now time.Time, l Limit, a Align) Decision {
	c := *w
	d := c.Take(now, l, a)
	d.Burst.Count--
	d.Sustain.Count--
	return d
}

// Idle reports whether both windows have ended at now, so the key holds no
// information and may be forgotten.
func (w *fixedWindows) Idle(now time.Time) bool { return w.idle(instant(now)) }

func (w *fixedWindows) idle(t int64) bool {
	return (w.burstCount == 0 || t >= w.burstStart+int64(BurstPeriod)) &&
		(w.sustainCount == 0 || t >= w.sustainStart+int64(SustainPeriod))
}

// last returns the newest window start, for eviction order.
func (w *fixedWindows) last() int64 { return max(w.burstStart, w.sustainStart) }

func (w *fixedWindows) roll(t int64, a Align) {
	rollOne(&w.burstStart, &w.burstCount, t, int64(BurstPeriod), a)
	rollOne(&w.sustainStart, &w.sustainCount, t, int64(SustainPeriod), a)
}

// rollOne opens a new window at t once the current one has ended. A
// request stamped before the current window's start by less than a period
// (two requests racing to the store with their clocks read in the other
// order) counts in it, as the service counts what it receives: restarting
// would forget the count. One stamped earlier still (a clock stepped back)
// opens a new window, which a window's length then bounds.
func rollOne(start *int64, count *int32, t, period int64, a Align) {
	if *count > 0 && t < *start+period && t >= *start-period {
		return
	}
	*count = 0
	*start = t
	if a == ClockAligned {
		*start = t - mod(t, period)
	}
}

func (w *fixedWindows) decision(t int64, l Limit) Decision {
	return Decision{
		Counts: Counts{Burst: WindowState{Count: int(w.burstCount), Limit: l.Burst,
			Reset: time.Duration(w.burstStart + int64(BurstPeriod) - t)}, Sustain: WindowState{Count: int(w.sustainCount), Limit: l.Sustain,
			Reset: time.Duration(w.sustainStart + int64(SustainPeriod) - t)}},
	}
}

func satInc(c int32) int32 {
	if c == math.MaxInt32 {
		return c
	}
	return c + 1
}

// mod returns t mod p in [0, p), also for negative t.
func mod(t, p int64) int64 {
	m := t % p
	if m < 0 {
		m += p
	}
	return m
}
