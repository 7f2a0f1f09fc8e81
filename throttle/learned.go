package throttle

import (
	"context"
	"sync"
	"time"
)

// LimitStore is implemented by a BudgetStore that also keeps the limits
// clients learn from the services' 429 bodies (maxRequests in
// periodInSeconds), so that the transports of a fleet on one store learn a
// limit once. MemoryBudgetStore and redisstore.Store implement it, with
// the rule Learn describes.
type LimitStore interface {
	// Learn records r, one 429 body's report. The first report of a limit
	// for a scope's window is a candidate; a report of the same limit from
	// another user, or from the same user a period or more after the
	// candidate, confirms it (a lone report may be one key's fault, or one
	// replica's): the limit is then in force for every key of the scope
	// until LearnedFor after the latest report of it (a report timed
	// before another of the same limit does not shorten it). A report out
	// of bounds (Learnable) changes nothing. A report is timed by its
	// sender's clock (LimitReport.At), and the store has none of its own:
	// a report timed at or past a limit's end finds that limit ended, as
	// Learned at that time would. Learn returns the window's limit in force
	// after r, or a zero Learned when none is.
	Learn(ctx context.Context, r LimitReport) (Learned, error)
	// Learned returns the limits in force at now: at most 2 × MaxLearned
	// windows (both windows of MaxLearned scopes, or one window of twice
	// as many).
	Learned(ctx context.Context, now time.Time) ([]Learned, error)
}

// Bounds on learned limits, so a hostile service cannot grow them.
const (
	MaxLearned  = 1024 // scopes' worth of windows: 2 × MaxLearned windows are kept
	MaxScopeLen = 256  // bytes, of a scope and of a report's user
	// LearnedFor is how long a learned limit, or a candidate, lasts after
	// the last report of it: two sustain windows.
	LearnedFor = 2 * SustainPeriod
)

// LimitReport is a service's report of the limit it applied to one window of a
// scope, as a 429 body gives it.
type LimitReport struct {
	Scope  string
	Period Period // Burst or Sustain
	Limit  int
	// User tells the reporting key's user from others (the transport
	// passes a digest of the userhash, never a token).
	User string
	At   time.Time
}

// Learned is a limit in force for one window of a scope until Until.
type Learned struct {
	Scope  string
	Period Period
	Limit  int
	Until  time.Time
}

// Learnable reports whether a LimitStore takes r: a limit of 1 to
// MaxLimit, of the burst or the sustain window, for a scope and a user of
// at most MaxScopeLen bytes.
func Learnable(r LimitReport) bool {
	return r.Limit >= 1 && r.Limit <= MaxLimit && len(r.Scope) <= MaxScopeLen && len(r.User) <= MaxScopeLen && (r.Period == Burst || r.Period == Sustain)
}

// learnedRecord is what a LimitStore keeps for one window of a scope: the
// limit in force and its end, and the candidate waiting to be confirmed.
// redisstore's learn.lua keeps the same record by the same rule.
type learnedRecord struct {
	Limit    int // in force until Until; 0 for none
	Until    time.Time
	Cand     int // the candidate's limit; 0 for none
	CandUser string
	CandAt   time.Time
}

// apply records r (of r.Period's window) and reports whether anything is
// left to keep.
func (rec *learnedRecord) apply(r LimitReport) bool {
	rec.expire(r.At)
	switch {
	case rec.Limit == r.Limit: // the limit in force, reported again
		rec.Until = later(rec.Until, r.At.Add(LearnedFor))
	case rec.Cand == r.Limit && (rec.CandUser != r.User || r.At.Sub(rec.CandAt) >= r.Period.Duration()):
		rec.Limit, rec.Until, rec.Cand, rec.CandUser = r.Limit, r.At.Add(LearnedFor), 0, ""
	case rec.Cand == r.Limit: // the same key's again, in the candidate's window
	default:
		rec.Cand, rec.CandUser, rec.CandAt = r.Limit, r.User, r.At
	}
	return rec.live(r.At)
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// expire drops what has lasted LearnedFor at now.
func (rec *learnedRecord) expire(now time.Time) {
	if rec.Limit != 0 && !now.Before(rec.Until) {
		rec.Limit, rec.Until = 0, time.Time{}
	}
	if rec.Cand != 0 && !now.Before(rec.CandAt.Add(LearnedFor)) {
		rec.Cand, rec.CandUser, rec.CandAt = 0, "", time.Time{}
	}
}

// live reports whether rec holds anything at now.
func (rec *learnedRecord) live(now time.Time) bool {
	rec.expire(now)
	return rec.Limit != 0 || rec.Cand != 0
}

// window names one window of a scope.
type window struct {
	scope string
	p     Period
}

// learnedLimits is a bounded map of learned records, safe for concurrent
// use: at most 2 × MaxLearned windows (the expired ones go first when it
// is full).
type learnedLimits struct {
	mu sync.Mutex
	m  map[window]*learnedRecord
}

func (l *learnedLimits) learn(r LimitReport) Learned {
	if !Learnable(r) {
		return Learned{}
	}
	r.At = r.At.Truncate(time.Microsecond) // as redisstore reads it: one rule, one result
	l.mu.Lock()
	defer l.mu.Unlock()
	w := window{r.Scope, r.Period}
	rec := l.m[w]
	if rec == nil {
		full := func() bool { return len(l.m) >= 2*MaxLearned }
		if full() {
			for k, old := range l.m {
				if !old.live(r.At) {
					delete(l.m, k)
				}
			}
		}
		if full() {
			return Learned{}
		}
		if l.m == nil {
			l.m = make(map[window]*learnedRecord)
		}
		rec = &learnedRecord{}
		l.m[w] = rec
	}
	if !rec.apply(r) {
		delete(l.m, w)
	}
	if rec.Limit == 0 {
		return Learned{}
	}
	return Learned{Scope: r.Scope, Period: r.Period, Limit: rec.Limit, Until: rec.Until}
}

func (l *learnedLimits) inForce(now time.Time) []Learned {
	now = now.Truncate(time.Microsecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Learned
	for w, rec := range l.m {
		rec.expire(now)
		if rec.Limit != 0 {
			out = append(out, Learned{Scope: w.scope, Period: w.p, Limit: rec.Limit, Until: rec.Until})
		}
	}
	return out
}

// Learn records a report (LimitStore). It never returns an error.
func (b *MemoryBudgetStore) Learn(_ context.Context, r LimitReport) (Learned, error) {
	return b.learned.learn(r), nil
}

// Learned returns the limits in force at now (LimitStore). It never
// returns an error.
func (b *MemoryBudgetStore) Learned(_ context.Context, now time.Time) ([]Learned, error) {
	return b.learned.inForce(now), nil
}
