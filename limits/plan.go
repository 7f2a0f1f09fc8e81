package limits

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// PeriodicCall is a call an application makes on a timer, for one user:
// Count calls of a rule's scope (Count users looked up one by one, say)
// every Every.
type PeriodicCall struct {
	Scope string
	Every time.Duration
	Count int
}

// PlanRow is the poll planner's verdict on one scope: the calls the
// periodic calls make in the worst-placed burst and sustain windows
// (windows start at a request, as the service's do, and the calls of a
// tick come together), what is left of each limit, and the fastest safe
// interval for the calls of a tick.
type PlanRow struct {
	Scope          string
	PerTick        int           // calls of the scope a tick, when they share one interval
	Every          time.Duration // their interval; 0 when the scope's calls have several
	BurstPeak      int           // calls in the busiest 15 s window
	SustainPeak    int           // calls in the busiest 300 s window
	Burst, Sustain int           // the rule's limits
	// BurstLeft and SustainLeft are the calls left in those windows:
	// 0 is exactly at a limit (one more call is a 429), negative is over.
	BurstLeft, SustainLeft int
	// Fastest is the shortest interval at which PerTick calls a tick stay
	// within both limits; 0 when no interval does (more calls a tick than
	// a limit).
	Fastest time.Duration
	// Batch is true when a tick makes several calls of a scope that has a
	// batch call (profile, presence, user stats, people hub): one batch
	// call could carry them.
	Batch bool
}

// Safe reports whether the scope's periodic calls stay within its limits.
func (p PlanRow) Safe() bool { return p.BurstLeft >= 0 && p.SustainLeft >= 0 }

// batchable are the scopes whose services take several users in one call.
var batchable = map[string]bool{"profile": true, "presence/read": true, "stats-read": true, "peoplehub": true}

// Plan answers, for a set of periodic calls of one user, each scope's
// busiest windows, what is left of its limits and its fastest safe
// interval: the poll planner (xblcall limits plan).
func (l *Limits) Plan(calls []PeriodicCall) ([]PlanRow, error) {
	by := map[string][]PeriodicCall{}
	for i, c := range calls {
		if c.Every <= 0 || c.Count < 1 {
			return nil, fmt.Errorf("limits: plan: call %d: an interval above 0 and a count of 1 or more", i)
		}
		if _, ok := l.ByScope(c.Scope); !ok {
			return nil, fmt.Errorf("limits: plan: call %d: no rule has scope %q", i, c.Scope)
		}
		by[c.Scope] = append(by[c.Scope], c)
	}
	rows := make([]PlanRow, 0, len(by))
	for scope, cs := range by {
		r, _ := l.ByScope(scope)
		lim := r.Limit()
		row := PlanRow{Scope: scope, Burst: lim.Burst, Sustain: lim.Sustain, Every: cs[0].Every}
		for _, c := range cs {
			row.PerTick += c.Count
			row.BurstPeak += c.Count * ticksIn(throttle.BurstPeriod, c.Every)
			row.SustainPeak += c.Count * ticksIn(throttle.SustainPeriod, c.Every)
			if c.Every != row.Every {
				row.Every = 0
			}
			row.Batch = row.Batch || batchable[scope] && c.Count > 1
		}
		row.BurstLeft, row.SustainLeft = left(lim.Burst, row.BurstPeak), left(lim.Sustain, row.SustainPeak)
		row.Fastest = fastest(row.PerTick, lim)
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b PlanRow) int { return strings.Compare(a.Scope, b.Scope) })
	return rows, nil
}

// ticksIn is how many ticks every apart fit in a window of length w that
// starts at one: ceil(w / every).
func ticksIn(w, every time.Duration) int {
	return int((w + every - 1) / every)
}

// left is what is left of a limit (none: no limit, as much as asked).
func left(limit, peak int) int {
	if limit <= 0 {
		return math.MaxInt32
	}
	return limit - peak
}

// fastest is the shortest interval at which k calls a tick fit both
// windows: a window of w and limit n takes floor(n/k) ticks, so ticks at
// least w / floor(n/k) apart, rounded up to the millisecond (w is whole
// seconds and floor(n/k) at most MaxLimit, so the nanoseconds the division
// drops never carry the result past a millisecond).
func fastest(k int, l throttle.Limit) time.Duration {
	var t time.Duration
	for _, w := range []struct {
		period time.Duration
		limit  int
	}{{throttle.BurstPeriod, l.Burst}, {throttle.SustainPeriod, l.Sustain}} {
		if w.limit <= 0 {
			continue
		}
		m := w.limit / k
		if m == 0 {
			return 0
		}
		t = max(t, w.period/time.Duration(m))
	}
	return (t + time.Millisecond - 1).Truncate(time.Millisecond) // a millisecond more never hurts
}
