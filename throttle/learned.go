package throttle

import (
	"context"
	"sync"
)

// LimitStore is implemented by a BudgetStore that also shares the limits
// clients learn from the services' 429 bodies (maxRequests in
// periodInSeconds), so that the transports of a fleet on one store learn a
// limit once. MemoryBudgetStore and redisstore.Store implement it.
type LimitStore interface {
	// Learn records the limit of one window of a scope as a service
	// reported it. Limits of more than MaxLearned scopes, or of a scope
	// longer than MaxScopeLen bytes, are not kept.
	Learn(ctx context.Context, scope string, p Period, limit int) error
	// Learned returns the limits learned so far by scope; a window not
	// learned is 0.
	Learned(ctx context.Context) (map[string]Limit, error)
}

// Bounds on learned limits, so a hostile service cannot grow them.
const (
	MaxLearned  = 1024 // scopes
	MaxScopeLen = 256  // bytes
)

// Learnable reports whether a LimitStore keeps a learned limit: a limit
// of 1 to MaxLimit, of the burst or the sustain window, for a scope of at
// most MaxScopeLen bytes.
func Learnable(scope string, p Period, limit int) bool {
	return limit > 0 && limit <= MaxLimit && len(scope) <= MaxScopeLen && (p == Burst || p == Sustain)
}

// learnedLimits is a bounded map of learned limits, safe for concurrent use.
type learnedLimits struct {
	mu sync.Mutex
	m  map[string]Limit
}

// learn sets p's limit of scope, within the bounds.
func (l *learnedLimits) learn(scope string, p Period, limit int) {
	if !Learnable(scope, p, limit) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.m[scope]
	if !ok && len(l.m) >= MaxLearned {
		return
	}
	if l.m == nil {
		l.m = make(map[string]Limit)
	}
	if p == Burst {
		v.Burst = limit
	} else {
		v.Sustain = limit
	}
	l.m[scope] = v
}

// all returns a copy of the map.
func (l *learnedLimits) all() map[string]Limit {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Limit, len(l.m))
	for k, v := range l.m {
		out[k] = v
	}
	return out
}

// Learn records a learned limit. It never returns an error.
func (b *MemoryBudgetStore) Learn(_ context.Context, scope string, p Period, limit int) error {
	b.learned.learn(scope, p, limit)
	return nil
}

// Learned returns the learned limits. It never returns an error.
func (b *MemoryBudgetStore) Learned(context.Context) (map[string]Limit, error) {
	return b.learned.all(), nil
}
