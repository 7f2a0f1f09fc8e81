package transport

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// DefaultMaxLearnedLimit is the ceiling a zero Transport.MaxLearnedLimit
// means: well above any published limit (300), so a service's report is
// believed, and far below what would switch the budget off.
const DefaultMaxLearnedLimit = 1000

// learnedRefresh is how often a transport reads the limits its shared store
// learned from other transports.
const learnedRefresh = 10 * time.Second

// learner holds the limits a Transport learned from 429 bodies, by scope:
// copied on write, so a call reads them without a lock.
type learner struct {
	m      atomic.Pointer[map[string]throttle.Limit]
	readAt atomic.Int64 // unix ns after which the shared store is read again
}

// LearnedLimit is a limit the transport learned from a service's 429 body
// (maxRequests in periodInSeconds) where the limits data had none or
// another: drift from the published table.
type LearnedLimit struct {
	Scope   string         // the rule's scope, or "host:" and the host for a host the data lacks
	Table   throttle.Limit // the limits data's (zero: none)
	Learned throttle.Limit // what the service reported (a window not reported is 0)
}

// LearnedLimits returns the limits learned so far, by scope, with the
// table's beside them.
func (t *Transport) LearnedLimits() []LearnedLimit {
	t.init()
	var out []LearnedLimit
	for scope, l := range t.learnedMap() {
		var table throttle.Limit
		if r, ok := t.limits.ByScope(scope); ok {
			table = r.Limit()
		}
		out = append(out, LearnedLimit{Scope: scope, Table: table, Learned: l})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Scope < out[j].Scope })
	return out
}

func (t *Transport) learnedMap() map[string]throttle.Limit {
	if m := t.learned.m.Load(); m != nil {
		return *m
	}
	return nil
}

// learning reports whether the transport learns limits.
func (t *Transport) learning() bool { return !t.DisableBudget && t.MaxLearnedLimit >= 0 }

func (t *Transport) ceiling() int {
	if t.MaxLearnedLimit == 0 {
		return DefaultMaxLearnedLimit
	}
	return t.MaxLearnedLimit
}

// limitOf returns the limit a key of scope counts against: the table's
// (zero for none) with each learned window in its place.
func (t *Transport) limitOf(ctx context.Context, scope string, table throttle.Limit, now time.Time) throttle.Limit {
	if !t.learning() {
		return table
	}
	t.readShared(ctx, now)
	l, ok := t.learnedMap()[scope]
	if !ok {
		return table
	}
	if l.Burst > 0 {
		table.Burst = l.Burst
	}
	if l.Sustain > 0 {
		table.Sustain = l.Sustain
	}
	return table
}

// readShared merges what the shared store learned, at most every
// learnedRefresh; one call reads it, the others go on.
func (t *Transport) readShared(ctx context.Context, now time.Time) {
	ls, ok := t.Budget.(throttle.LimitStore)
	next := t.learned.readAt.Load()
	if !ok || now.UnixNano() < next || !t.learned.readAt.CompareAndSwap(next, now.Add(learnedRefresh).UnixNano()) {
		return
	}
	shared, err := ls.Learned(context.WithoutCancel(ctx))
	if err != nil || len(shared) == 0 {
		return
	}
	t.setLearned(func(m map[string]throttle.Limit) {
		for scope, l := range shared {
			if _, ok := m[scope]; ok || len(m) < throttle.MaxLearned {
				m[scope] = throttle.Limit{Burst: min(l.Burst, t.ceiling()), Sustain: min(l.Sustain, t.ceiling())}
			}
		}
	})
}

// setLearned applies edit to a copy of the learned limits and publishes it.
func (t *Transport) setLearned(edit func(map[string]throttle.Limit)) {
	for {
		old := t.learned.m.Load()
		m := make(map[string]throttle.Limit)
		if old != nil {
			maps.Copy(m, *old)
		}
		edit(m)
		if t.learned.m.CompareAndSwap(old, &m) {
			return
		}
	}
}

// learn takes the limit a 429's body reports for the call's key when it
// differs from the one the call counted against: kept (up to the ceiling)
// for every later call of the scope, shared through the budget store, and
// reported once as an EventLimitLearned.
func (c *call) learn(b *ratelimit.Body) {
	if b == nil || b.MaxRequests <= 0 || !c.t.learning() || len(c.key.Scope) > throttle.MaxScopeLen {
		return
	}
	var p throttle.Period
	switch b.PeriodInSeconds {
	case 15:
		p = throttle.Burst
	case 300:
		p = throttle.Sustain
	default:
		return // a window the accounting does not know
	}
	n, was := min(b.MaxRequests, c.t.ceiling()), &c.full.Burst
	if p == throttle.Sustain {
		was = &c.full.Sustain
	}
	if n == *was {
		return
	}
	old, scope, changed := *was, c.key.Scope, false
	c.t.setLearned(func(m map[string]throttle.Limit) {
		l, ok := m[scope]
		if !ok && len(m) >= throttle.MaxLearned {
			return
		}
		if p == throttle.Burst {
			changed, l.Burst = l.Burst != n, n
		} else {
			changed, l.Sustain = l.Sustain != n, n
		}
		m[scope] = l
	})
	*was = n
	c.limit = c.t.share(c.full)
	if !changed {
		return // another call learned it first
	}
	if ls, ok := c.t.Budget.(throttle.LimitStore); ok {
		if err := ls.Learn(context.WithoutCancel(c.ctx), scope, p, n); err != nil {
			c.emit(Event{Kind: EventBudgetError, Err: err, Reason: "learn"})
		}
	}
	was0 := "none in the limits data"
	if old > 0 {
		was0 = fmt.Sprintf("was %d", old)
	}
	c.emit(Event{Kind: EventLimitLearned, Reason: fmt.Sprintf("%s %d in %d s (%s)", p, n, b.PeriodInSeconds, was0)})
}
